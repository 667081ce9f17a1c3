// What a suppression list costs at the sizes buyers and operators upload: the time to build the
// lookup from N entries, its memory, and the time a lead's lookup takes in it (its e-mail's and
// phone's fingerprints against the list), for leads in and out of the list. Run by
// `scripts/bench.sh suppression`; prints one line per measurement, medians of the rounds.
//
// Usage: leadflow-suppression-bench [--entries N] [--lookups M] [--rounds R] [--lists L]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "leadflow/suppression/suppression_set.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

long flag(int argc, char** argv, const char* name, long fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace leadflow;
  const long entries = flag(argc, argv, "--entries", 10'000'000);
  const long lookups = flag(argc, argv, "--lookups", 1'000'000);
  const long rounds = flag(argc, argv, "--rounds", 5);
  const long lists = flag(argc, argv, "--lists", 1);
  if (entries < 1 || lookups < 1 || rounds < 1 || lists < 1) {
    std::fprintf(stderr, "usage: %s [--entries N] [--lookups M] [--rounds R] [--lists L]\n",
                 argv[0]);
    return 2;
  }

  // The persons the leads are: e-mails and phones as validation keeps them; one in a hundred of
  // them is in every list.
  std::mt19937_64 random(1);
  std::vector<std::string> emails, phones;
  for (long i = 0; i < lookups; ++i) {
    emails.push_back("person" + std::to_string(random()) + "@example.com");
    phones.push_back("+1" + std::to_string(2000000000 + random() % 7999999999));
  }

  std::vector<SuppressionSet> sets;
  std::vector<double> build_s;
  for (long l = 0; l < lists; ++l) {
    std::vector<SuppressionFingerprint> fingerprints;
    fingerprints.reserve(static_cast<std::size_t>(entries));
    for (long i = 0; i < lookups && static_cast<long>(fingerprints.size()) < entries; i += 100)
      fingerprints.push_back(*fingerprint_of_value(emails[static_cast<std::size_t>(i)]));
    while (static_cast<long>(fingerprints.size()) < entries) fingerprints.push_back(random());
    const auto t = Clock::now();
    sets.emplace_back(std::move(fingerprints));
    build_s.push_back(seconds_since(t));
  }
  std::printf(
      "suppression: %ld entries a list, %ld list(s): build %.3f s a list (median), %.1f MiB a "
      "list\n",
      entries, lists, median(build_s),
      static_cast<double>(sets.front().memory_bytes()) / (1 << 20));

  // The fingerprints of each lead, once (what a lead costs whatever the number of lists).
  std::vector<double> hash_ns, lookup_ns;
  long suppressed = 0;
  for (long r = 0; r < rounds; ++r) {
    std::vector<PersonFingerprints> persons;
    persons.reserve(static_cast<std::size_t>(lookups));
    auto t = Clock::now();
    for (long i = 0; i < lookups; ++i)
      persons.push_back(person_fingerprints(emails[static_cast<std::size_t>(i)],
                                            phones[static_cast<std::size_t>(i)]));
    hash_ns.push_back(seconds_since(t) * 1e9 / static_cast<double>(lookups));
    // In an order unrelated to the lists', as leads arrive.
    std::shuffle(persons.begin(), persons.end(), random);
    suppressed = 0;
    t = Clock::now();
    for (const auto& p : persons)
      for (const auto& s : sets) suppressed += s.suppresses(p) ? 1 : 0;
    lookup_ns.push_back(seconds_since(t) * 1e9 / static_cast<double>(lookups * lists));
  }
  std::printf(
      "suppression: a lead's two fingerprints %.0f ns; its lookup %.0f ns a list (median of %ld "
      "rounds of %ld leads; %ld matches a round)\n",
      median(hash_ns), median(lookup_ns), rounds, lookups, suppressed);
  return 0;
}
