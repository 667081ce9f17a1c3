// leadflow-buyer-sim: a simulated buyer endpoint to point a buyer config at (demo, load tests).
#include <signal.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <string_view>

#include "leadflow/sim/buyer_sim.hpp"

namespace {

constexpr const char* kUsage = R"(usage: leadflow-buyer-sim [flags]

A simulated buyer speaking leadflow's default JSON ping/post protocol.
  POST /ping -> {"bid": n}   POST /post -> {"accepted": ...}   GET /healthz   GET /stats

flags (--flag VALUE or --flag=VALUE):
  --host H              address to bind (default 127.0.0.1)
  --port N              port to bind, 0 for an ephemeral one (default 0)
  --name S              buyer name, prefixes buyer_lead_id (default sim)
  --bid D               fixed bid in dollars (default 10)
  --bid-range MIN:MAX   uniform random bid in dollars, rounded to the cent
  --shared-bid D        every bid also offers D dollars for a share of a shared sale
  --no-bid-rate R       fraction of pings answered {"bid": 0} (default 0)
  --latency-ms N        base answer delay (default 0)
  --jitter-ms N         extra uniform delay 0..N (default 0)
  --timeout-rate R      fraction of pings that hang for --hang-ms (default 0)
  --hang-ms N           how long a hanging ping waits (default 5000)
  --error-rate R        fraction of pings and posts answered 500 (default 0)
  --reject-rate R       fraction of posts answered {"accepted": false} (default 0)
  --reject-reason S     reason given with a reject
  --seed N              random seed; same seed and request order give the same answers (default 42)
  --tls-cert PATH       PEM certificate: serve HTTPS (needs --tls-key)
  --tls-key PATH        PEM private key
  --loops N             event-loop threads (default 1); each holds any number of connections
                        and delayed answers, no thread per request (--threads: older name)
  --keep-alive-s N      idle keep-alive timeout in seconds (default 5)
  --help                this text

Prints {"event":"listening","port":N} on stdout once ready; exits 0 on SIGTERM or SIGINT.
)";

struct UsageError {
  std::string message;
};

double parse_double(std::string_view flag, const std::string& v) {
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used != v.size()) throw std::invalid_argument(v);
    return d;
  } catch (const std::exception&) {
    throw UsageError{std::string(flag) + ": not a number: " + v};
  }
}

std::int64_t parse_int(std::string_view flag, const std::string& v, std::int64_t lo,
                       std::int64_t hi) {
  std::int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size() || out < lo || out > hi) {
    throw UsageError{std::string(flag) + ": expected an integer in [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "], got " + v};
  }
  return out;
}

double parse_rate(std::string_view flag, const std::string& v) {
  double r = parse_double(flag, v);
  if (!(r >= 0.0 && r <= 1.0))
    throw UsageError{std::string(flag) + ": expected a fraction in [0, 1]"};
  return r;
}

double parse_dollars(std::string_view flag, const std::string& v) {
  double d = parse_double(flag, v);
  if (!(d >= 0.0 && d <= 1'000'000.0))
    throw UsageError{std::string(flag) + ": expected 0..1000000 dollars"};
  return d;
}

leadflow::BuyerSimOptions parse_args(int argc, char** argv) {
  using Setter = std::function<void(leadflow::BuyerSimOptions&, const std::string&)>;
  const std::map<std::string, Setter, std::less<>> flags = {
      {"--host", [](auto& o, const auto& v) { o.host = v; }},
      {"--port",
       [](auto& o, const auto& v) { o.port = static_cast<int>(parse_int("--port", v, 0, 65535)); }},
      {"--name", [](auto& o, const auto& v) { o.name = v; }},
      {"--bid",
       [](auto& o, const auto& v) {
         o.bid = leadflow::BidModel::fixed(parse_dollars("--bid", v));
       }},
      {"--bid-range",
       [](auto& o, const auto& v) {
         const auto colon = v.find(':');
         if (colon == std::string::npos) throw UsageError{"--bid-range: expected MIN:MAX"};
         const double lo = parse_dollars("--bid-range", v.substr(0, colon));
         const double hi = parse_dollars("--bid-range", v.substr(colon + 1));
         if (hi < lo) throw UsageError{"--bid-range: MIN must not exceed MAX"};
         o.bid = leadflow::BidModel::uniform(lo, hi);
       }},
      {"--shared-bid",
       [](auto& o, const auto& v) { o.shared_bid = parse_dollars("--shared-bid", v); }},
      {"--no-bid-rate",
       [](auto& o, const auto& v) { o.no_bid_rate = parse_rate("--no-bid-rate", v); }},
      {"--latency-ms",
       [](auto& o, const auto& v) {
         o.latency_ms = static_cast<int>(parse_int("--latency-ms", v, 0, 600'000));
       }},
      {"--jitter-ms",
       [](auto& o, const auto& v) {
         o.jitter_ms = static_cast<int>(parse_int("--jitter-ms", v, 0, 600'000));
       }},
      {"--timeout-rate",
       [](auto& o, const auto& v) { o.timeout_rate = parse_rate("--timeout-rate", v); }},
      {"--hang-ms",
       [](auto& o, const auto& v) {
         o.hang_ms = static_cast<int>(parse_int("--hang-ms", v, 0, 3'600'000));
       }},
      {"--error-rate",
       [](auto& o, const auto& v) { o.error_rate = parse_rate("--error-rate", v); }},
      {"--reject-rate",
       [](auto& o, const auto& v) { o.reject_rate = parse_rate("--reject-rate", v); }},
      {"--reject-reason", [](auto& o, const auto& v) { o.reject_reason = v; }},
      {"--seed",
       [](auto& o, const auto& v) {
         o.seed = static_cast<std::uint64_t>(parse_int("--seed", v, 0, INT64_MAX));
       }},
      {"--tls-cert", [](auto& o, const auto& v) { o.tls_cert = v; }},
      {"--tls-key", [](auto& o, const auto& v) { o.tls_key = v; }},
      {"--loops",
       [](auto& o, const auto& v) { o.loops = static_cast<int>(parse_int("--loops", v, 1, 64)); }},
      {"--threads",
       [](auto& o, const auto& v) {
         o.loops = static_cast<int>(parse_int("--threads", v, 1, 64));
       }},
      {"--keep-alive-s",
       [](auto& o, const auto& v) {
         o.keep_alive_timeout_s = static_cast<int>(parse_int("--keep-alive-s", v, 0, 3600));
       }},
  };

  leadflow::BuyerSimOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    std::string value;
    bool has_value = false;
    if (const auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
      has_value = true;
    }
    const auto it = flags.find(arg);
    if (it == flags.end()) throw UsageError{"unknown flag: " + arg};
    if (!has_value) {
      if (i + 1 >= argc) throw UsageError{arg + ": missing value"};
      value = argv[++i];
    }
    it->second(options, value);
  }
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    throw UsageError{"--tls-cert and --tls-key go together"};
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  leadflow::BuyerSimOptions options;
  try {
    options = parse_args(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "leadflow-buyer-sim: " << e.message << "\n\n" << kUsage;
    return 2;
  }

  // Block the stop signals before any thread exists so every server thread inherits the mask and
  // only sigwait below sees them. A client hanging up mid-answer must not kill the process.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  leadflow::BuyerSimulator sim(options);
  try {
    sim.start();
  } catch (const std::exception& e) {
    std::cerr << R"({"event":"start_failed","error":)" << nlohmann::json(e.what()).dump() << "}\n";
    return 1;
  }
  std::cout << nlohmann::json{{"event", "listening"},
                              {"port", sim.port()},
                              {"name", sim.name()},
                              {"url", sim.base_url()}}
                   .dump()
            << std::endl;

  int received = 0;
  sigwait(&stop_signals, &received);
  sim.stop();
  std::cerr << nlohmann::json{{"event", "stopped"},
                              {"signal", received},
                              {"stats", sim.stats().to_json()}}
                   .dump()
            << std::endl;
  return 0;
}
