// leadflow-admin generate: the leads of `days` days, with their auctions, sales and returns,
// written through the store's own batch paths. Every random choice comes from one generator
// seeded by --seed and drawn in a fixed order, so a seed gives the same data on either store.
#include "generate.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iterator>
#include <map>
#include <random>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "leadflow/money/payout.hpp"

namespace leadflow {
namespace {

constexpr std::int64_t kHourMs = 3'600'000;

/// The draws: one 64-bit generator; every helper takes what it needs from it in a fixed order.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t bits() { return rng_(); }
  /// [0, 1)
  double unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }
  /// [lo, hi]
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(rng_() % v.size())];
  }
  template <typename T, std::size_t N>
  const T& pick(const std::array<T, N>& v) {
    return v[static_cast<std::size_t>(rng_() % N)];
  }
  /// A positive factor with median 1 and a long right tail (response times, prices).
  double spread(double sigma) {
    // Box-Muller from two uniforms: portable, unlike std::normal_distribution's algorithm.
    const double u1 = 1.0 - unit(), u2 = unit();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return std::exp(sigma * z);
  }

 private:
  std::mt19937_64 rng_;
};

/// A sortable id of the store's layout (prefix + 26 Crockford base32 characters: 48 bits of
/// milliseconds, 80 drawn bits), made from the draws so that a seed gives the same ids.
std::string make_id(std::string_view prefix, std::int64_t ms, Draw& draw) {
  static constexpr char kAlphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const std::uint64_t hi = draw.bits(), lo = draw.bits();
  unsigned __int128 v =
      static_cast<unsigned __int128>(static_cast<std::uint64_t>(ms) & 0xFFFF'FFFF'FFFFULL) << 80;
  v |= static_cast<unsigned __int128>(hi & 0x7FFF) << 64;  // headroom, as new_id keeps
  v |= lo;
  std::string out(prefix);
  out.resize(prefix.size() + 26);
  for (int i = 25; i >= 0; --i) {
    out[prefix.size() + static_cast<std::size_t>(i)] = kAlphabet[static_cast<int>(v & 31)];
    v >>= 5;
  }
  return out;
}

struct VerticalPlan {
  const char* name;
  Cents base_bid;  // a typical winning bid, in cents
};
constexpr std::array<VerticalPlan, 8> kVerticals = {{{"auto_insurance", 1800},
                                                     {"home_insurance", 2200},
                                                     {"health_insurance", 2600},
                                                     {"life_insurance", 3100},
                                                     {"mortgage", 4500},
                                                     {"solar", 5200},
                                                     {"debt_relief", 3800},
                                                     {"personal_loans", 1500}}};

constexpr std::array<const char*, 12> kSources = {
    "google",      "facebook", "bing", "tiktok",  "email", "native", "affiliate_a",
    "affiliate_b", "youtube",  "sms",  "organic", ""};  // "": a lead posted without a source

constexpr std::array<const char*, 16> kFirstNames = {
    "james", "mary",      "robert",  "patricia", "john",  "jennifer", "michael", "linda",
    "david", "elizabeth", "william", "barbara",  "maria", "susan",    "carlos",  "karen"};
constexpr std::array<const char*, 16> kLastNames = {
    "smith",     "johnson",  "williams",  "brown", "jones",  "garcia",   "miller", "davis",
    "rodriguez", "martinez", "hernandez", "lopez", "wilson", "anderson", "thomas", "taylor"};
constexpr std::array<const char*, 5> kMailDomains = {"gmail.com", "yahoo.com", "outlook.com",
                                                     "aol.com", "icloud.com"};
struct ZipState {
  const char* zip;
  const char* state;
};
constexpr std::array<ZipState, 12> kZips = {{{"10001", "NY"},
                                             {"11201", "NY"},
                                             {"90012", "CA"},
                                             {"94103", "CA"},
                                             {"60601", "IL"},
                                             {"77002", "TX"},
                                             {"75201", "TX"},
                                             {"33101", "FL"},
                                             {"30303", "GA"},
                                             {"85004", "AZ"},
                                             {"98101", "WA"},
                                             {"02108", "MA"}}};
constexpr std::array<const char*, 3> kAgents = {
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36",
    "Mozilla/5.0 (Linux; Android 14) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"};
constexpr std::array<const char*, 5> kNoteless = {"invalid_phone", "invalid_email", "duplicate",
                                                  "not_interested", "fraud"};

// Leads per hour of the day (UTC), relative: a US audience, quiet at night, busiest in the
// afternoon and evening Eastern time.
constexpr std::array<double, 24> kHourWeight = {0.55, 0.45, 0.35, 0.25, 0.18, 0.12, 0.08, 0.07,
                                                0.08, 0.10, 0.16, 0.28, 0.45, 0.62, 0.78, 0.90,
                                                0.97, 1.00, 0.98, 0.95, 0.90, 0.85, 0.78, 0.68};

struct GenSeller {
  Seller seller;
  std::vector<const Campaign*> campaigns;
  std::vector<std::string> sources;
  std::string api_key_id;  // the key its Surface A leads name
  std::string domain;
};

struct GenBuyer {
  Buyer buyer;
  std::int32_t latency_ms = 100;  // its typical answer time
  double bid_rate = 0.5, accept_rate = 0.9, timeout_rate = 0.04, error_rate = 0.02;
  double price_factor = 1.0;
  double return_rate = 0.04;
  std::string key_id;  // the key its returns are made with
};

struct Person {
  std::string first, last, email, phone;
};

/// The world the leads arrive in: accounts, and the recent people of each vertical (for
/// duplicates).
struct World {
  std::vector<Campaign> campaigns;  // stable addresses: reserved before use
  std::vector<GenSeller> sellers;
  std::vector<GenBuyer> buyers;
  std::map<std::string, std::vector<const GenBuyer*>> buyers_of;  // vertical -> by tier
  std::map<std::string, std::vector<Person>> recent;              // vertical -> ring
  std::map<std::string, std::size_t> recent_next;
};

Person new_person(Draw& d, std::int64_t serial) {
  Person p;
  p.first = d.pick(kFirstNames);
  p.last = d.pick(kLastNames);
  p.email = p.first + "." + p.last + std::to_string(serial) + "@" + d.pick(kMailDomains);
  // NANP: area and exchange codes start 2-9; no N11 area codes.
  std::int64_t area = d.between(201, 989);
  if (area % 100 == 11) area += 1;
  const std::int64_t exchange = d.between(200, 999), line = d.between(0, 9999);
  char phone[16];
  std::snprintf(phone, sizeof phone, "+1%03lld%03lld%04lld", static_cast<long long>(area),
                static_cast<long long>(exchange), static_cast<long long>(line));
  p.phone = phone;
  p.first[0] = static_cast<char>(p.first[0] - 'a' + 'A');
  p.last[0] = static_cast<char>(p.last[0] - 'a' + 'A');
  return p;
}

StoreStatus make_accounts(Store& store, const GenerateOptions& o, std::int64_t start_ms, Draw& d,
                          World& w) {
  const std::int64_t created = start_ms - 30 * kDayMs;
  w.campaigns.reserve(static_cast<std::size_t>(o.sellers) * 3);
  for (int s = 0; s < o.sellers; ++s) {
    GenSeller g;
    g.seller.id = make_id(kSellerPrefix, created + s, d);
    g.seller.name = std::string("Seller ") + std::to_string(s + 1);
    g.seller.payout_fixed = d.chance(0.25);
    g.seller.payout_value =
        g.seller.payout_fixed ? d.between(8, 20) * 100 : d.between(55, 80) * 100;
    g.seller.created_at_ms = created + s;
    g.api_key_id = make_id(kKeyPrefix, created + s, d);
    g.domain = std::string("seller") + std::to_string(s + 1) + ".example.com";
    if (StoreStatus st = store.insert_seller(g.seller); st != StoreStatus::kOk) return st;
    // Each seller posts a few sources (the first with most of its traffic).
    const int n_sources = static_cast<int>(d.between(2, 5));
    for (int i = 0; i < n_sources; ++i) {
      const char* src = d.pick(kSources);
      if (std::find(g.sources.begin(), g.sources.end(), src) == g.sources.end())
        g.sources.emplace_back(src);
    }
    // One to three Surface B campaigns, each of one vertical.
    const int n_campaigns = static_cast<int>(d.between(1, 3));
    for (int c = 0; c < n_campaigns; ++c) {
      Campaign camp;
      camp.id = make_id(kCampaignPrefix, created + s, d);
      camp.seller_id = g.seller.id;
      camp.vertical = d.pick(kVerticals).name;
      camp.name = g.seller.name + " " + camp.vertical;
      camp.async_mode = d.chance(0.5);
      camp.payout_fixed = d.chance(0.3);
      camp.payout_value = camp.payout_fixed ? d.between(5, 25) * 100 : d.between(50, 75) * 100;
      // A hash no key has: these campaigns take no posts from outside.
      camp.key_hash = "generated-" + camp.id;
      camp.key_hint = "lfc_gen";
      camp.created_at_ms = created + s;
      if (StoreStatus st = store.insert_campaign(camp); st != StoreStatus::kOk) return st;
      w.campaigns.push_back(camp);
      g.campaigns.push_back(&w.campaigns.back());
    }
    w.sellers.push_back(std::move(g));
  }
  for (int b = 0; b < o.buyers; ++b) {
    GenBuyer g;
    Buyer& by = g.buyer;
    by.id = make_id(kBuyerPrefix, created + b, d);
    by.name = std::string("Buyer ") + std::to_string(b + 1);
    // Every vertical has buyers: buyer b takes vertical b mod 8, and up to two more.
    by.verticals.emplace_back(kVerticals[static_cast<std::size_t>(b) % kVerticals.size()].name);
    const int more = static_cast<int>(d.between(0, 2));
    for (int i = 0; i < more; ++i) {
      const char* v = d.pick(kVerticals).name;
      if (std::find(by.verticals.begin(), by.verticals.end(), v) == by.verticals.end())
        by.verticals.emplace_back(v);
    }
    by.ping_url = std::string("https://buyer") + std::to_string(b + 1) + ".example.com/ping";
    by.post_url = std::string("https://buyer") + std::to_string(b + 1) + ".example.com/post";
    by.timeout_ms = 1000;
    by.tier = d.chance(0.7) ? 1 : 2;
    by.duplicate_lookback_days = 30;
    by.return_window_days = 7;
    by.max_return_rate = 0.15;
    by.created_at_ms = by.updated_at_ms = created + b;
    g.latency_ms = static_cast<std::int32_t>(d.between(40, 350));
    g.bid_rate = 0.35 + 0.4 * d.unit();
    g.accept_rate = 0.85 + 0.12 * d.unit();
    g.timeout_rate = 0.01 + 0.05 * d.unit();
    g.error_rate = 0.005 + 0.02 * d.unit();
    g.price_factor = 0.7 + 0.6 * d.unit();
    g.return_rate = o.return_rate * (0.5 + d.unit());
    g.key_id = make_id(kKeyPrefix, created + b, d);
    if (StoreStatus st = store.insert_buyer(by); st != StoreStatus::kOk) return st;
    w.buyers.push_back(std::move(g));
  }
  for (const GenBuyer& g : w.buyers)
    for (const std::string& v : g.buyer.verticals) w.buyers_of[v].push_back(&g);
  for (auto& [v, list] : w.buyers_of)
    std::stable_sort(list.begin(), list.end(), [](const GenBuyer* a, const GenBuyer* b) {
      return a->buyer.tier < b->buyer.tier;
    });
  return StoreStatus::kOk;
}

/// The arrival times: `n` instants in [start, end) following the daily cycle (weekends
/// quieter), sorted.
std::vector<std::int64_t> arrivals(std::int64_t n, std::int64_t start, std::int64_t end, Draw& d) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(n));
  const std::int64_t span = end - start;
  while (static_cast<std::int64_t>(out.size()) < n) {
    const std::int64_t t =
        start + static_cast<std::int64_t>(d.bits() % static_cast<std::uint64_t>(span));
    const std::int64_t hour = (t / kHourMs) % 24;
    const std::int64_t weekday = (t / kDayMs + 4) % 7;  // 1970-01-01 was a Thursday (4)
    const double weight =
        kHourWeight[static_cast<std::size_t>(hour)] * (weekday == 0 || weekday == 6 ? 0.65 : 1.0);
    if (d.unit() < weight) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// One lead of the seller, arrived at `at`.
Lead make_lead(World& w, Draw& d, std::int64_t at, std::int64_t serial) {
  GenSeller& s = w.sellers[static_cast<std::size_t>(
      d.between(0, static_cast<std::int64_t>(w.sellers.size()) - 1))];
  Lead l;
  l.id = make_id(kLeadPrefix, at, d);
  l.seller_id = s.seller.id;
  // Two thirds through a campaign (Surface B), the rest on Surface A.
  if (!s.campaigns.empty() && d.chance(0.66)) {
    const Campaign& c = *s.campaigns[static_cast<std::size_t>(
        d.between(0, static_cast<std::int64_t>(s.campaigns.size()) - 1))];
    l.surface = Surface::kCampaign;
    l.campaign_id = c.id;
    l.vertical = c.vertical;
  } else {
    l.surface = Surface::kApi;
    l.api_key_id = s.api_key_id;
    l.vertical = d.pick(kVerticals).name;
  }
  // Sources: the seller's first one carries about half of its leads.
  l.source = d.chance(0.5) ? s.sources.front() : d.pick(s.sources);
  const Person p = new_person(d, serial);
  l.first_name = p.first;
  l.last_name = p.last;
  l.email = p.email;
  l.phone = p.phone;
  const ZipState& z = d.pick(kZips);
  l.zip_code = z.zip;
  l.state = z.state;
  l.landing_page = "https://" + s.domain + "/" + l.vertical;
  char ip[16];
  std::snprintf(ip, sizeof ip, "%d.%d.%d.%d", static_cast<int>(d.between(24, 99)),
                static_cast<int>(d.between(0, 255)), static_cast<int>(d.between(0, 255)),
                static_cast<int>(d.between(1, 254)));
  l.ip_address = ip;
  l.user_agent = d.pick(kAgents);
  l.tcpa_consent = true;
  l.tcpa_consent_text = "I agree to be contacted about " + l.vertical + ".";
  if (d.chance(0.4)) l.jornaya_leadid = make_id("", at, d);
  l.received_at_ms = at;
  l.sync_wait_ms = l.surface == Surface::kCampaign ? 0 : 3000;
  return l;
}

/// The auction of a lead: pings tier by tier, posts to the best bidders, its outcome.
Distribution auction(const World& w, Draw& d, const Lead& l, const Seller& seller,
                     const Campaign* campaign, GenerateSummary& sum) {
  Distribution dist;
  std::int64_t now = l.received_at_ms + d.between(3, 40);  // the worker picks it up
  Cents base = 2000;
  for (const auto& v : kVerticals)
    if (l.vertical == v.name) base = v.base_bid;
  const auto it = w.buyers_of.find(l.vertical);
  const std::vector<const GenBuyer*> none;
  const auto& buyers = it == w.buyers_of.end() ? none : it->second;
  bool decided = false;
  for (std::size_t i = 0; i < buyers.size() && !decided;) {
    const int tier = buyers[i]->buyer.tier;
    std::vector<std::pair<Cents, const GenBuyer*>> bids;
    std::int64_t tier_end = now;
    for (; i < buyers.size() && buyers[i]->buyer.tier == tier; ++i) {
      const GenBuyer& b = *buyers[i];
      const double r = d.unit();
      if (r < 0.06) {
        dist.ineligible.push_back({b.buyer.id, "filter:states"});
        continue;
      }
      if (r < 0.08) {
        dist.ineligible.push_back({b.buyer.id, "cap:daily"});
        continue;
      }
      Attempt a;
      a.buyer_id = b.buyer.id;
      a.kind = AttemptKind::kPing;
      a.tier = tier;
      a.started_at_ms = now + d.between(0, 5);
      const double o = d.unit();
      if (o < b.timeout_rate) {
        a.outcome = AttemptOutcome::kTimeout;
        a.duration_ms = b.buyer.timeout_ms;
        a.reason = "timeout";
      } else if (o < b.timeout_rate + b.error_rate) {
        a.outcome = AttemptOutcome::kError;
        a.duration_ms = static_cast<std::int32_t>(d.between(5, 80));
        a.http_status = d.chance(0.7) ? 500 : 503;
        a.reason = std::string("http_") + std::to_string(a.http_status);
      } else {
        a.duration_ms = std::min<std::int32_t>(
            b.buyer.timeout_ms - 1,
            std::max<std::int32_t>(5, static_cast<std::int32_t>(b.latency_ms * d.spread(0.45))));
        a.http_status = 200;
        if (d.chance(b.bid_rate)) {
          a.outcome = AttemptOutcome::kBid;
          a.bid = std::max<Cents>(
              100, static_cast<Cents>(
                       std::llround(static_cast<double>(base) * b.price_factor * d.spread(0.25))));
          bids.emplace_back(*a.bid, &b);
        } else {
          a.outcome = AttemptOutcome::kNoBid;
          a.reason = d.chance(0.5) ? "no_match" : "no_bid";
        }
      }
      tier_end = std::max(tier_end, a.started_at_ms + a.duration_ms);
      dist.attempts.push_back(std::move(a));
      ++sum.pings;
    }
    now = tier_end + d.between(1, 8);
    // Posts to the bidders, best first, until one accepts; an unanswered post ends the lead.
    std::stable_sort(bids.begin(), bids.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [price, b] : bids) {
      Attempt a;
      a.buyer_id = b->buyer.id;
      a.kind = AttemptKind::kPost;
      a.tier = tier;
      a.started_at_ms = now;
      a.bid = price;
      const double o = d.unit();
      ++sum.posts;
      if (o < b->accept_rate) {
        a.outcome = AttemptOutcome::kAccepted;
        a.http_status = 200;
        a.duration_ms = static_cast<std::int32_t>(
            std::min<double>(b->buyer.timeout_ms - 1, 5 + b->latency_ms * d.spread(0.4)));
        dist.status = DeliveryStatus::kDelivered;
        dist.buyer_id = b->buyer.id;
        dist.price = price;
        dist.payout = money::seller_payout(campaign, &seller, price);
        dist.buyer_lead_id = std::string("b") + std::to_string(d.between(100000000, 999999999));
        dist.sales.push_back({dist.buyer_id, dist.price, dist.payout, dist.buyer_lead_id});
      } else if (o < b->accept_rate + 0.02) {
        a.outcome = AttemptOutcome::kTimeout;
        a.duration_ms = b->buyer.timeout_ms;
        a.reason = "timeout";
        dist.status = DeliveryStatus::kFailed;
        dist.reason = "post_unanswered";
      } else {
        a.outcome = AttemptOutcome::kRejected;
        a.http_status = 200;
        a.duration_ms = static_cast<std::int32_t>(
            std::min<double>(b->buyer.timeout_ms - 1, 5 + b->latency_ms * d.spread(0.4)));
        a.reason = d.chance(0.5) ? "duplicate" : "rejected";
      }
      now = a.started_at_ms + a.duration_ms + d.between(1, 5);
      dist.attempts.push_back(std::move(a));
      if (dist.status != DeliveryStatus::kPending) {
        decided = true;
        break;
      }
    }
  }
  if (dist.status == DeliveryStatus::kPending) {
    dist.status = DeliveryStatus::kUnsold;
    dist.reason = dist.attempts.empty() ? "no_eligible_buyers" : "no_sale";
  }
  dist.decided_at_ms = now;
  return dist;
}

void print_progress(FILE* out, const GenerateOptions& o, std::int64_t done, std::int64_t rows,
                    double seconds) {
  if (!out) return;
  std::fprintf(out, "generate: %lld/%lld leads (%.1f%%) in %.0f s: %.0f leads/s, %.0f rows/s\n",
               static_cast<long long>(done), static_cast<long long>(o.leads),
               o.leads ? 100.0 * static_cast<double>(done) / static_cast<double>(o.leads) : 100.0,
               seconds, seconds > 0 ? static_cast<double>(done) / seconds : 0.0,
               seconds > 0 ? static_cast<double>(rows) / seconds : 0.0);
  std::fflush(out);
}

}  // namespace

std::optional<GenerateSummary> generate(Store& store, const GenerateOptions& o,
                                        std::string& error) {
  const auto started = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  if (o.leads < 0 || o.days < 1 || o.sellers < 1 || o.buyers < 1 || o.batch < 1) {
    error = "--leads must be 0 or more; --days, --sellers, --buyers and --batch 1 or more";
    return std::nullopt;
  }
  {
    LeadQuery any;
    any.limit = 1;
    const auto some = store.list_leads(any);
    if (!some) {
      error = "the store could not be read: nothing was generated";
      return std::nullopt;
    }
    if (!some->empty()) {
      error = "the store already holds leads: generate writes into a store without any";
      return std::nullopt;
    }
  }
  // The leads are searchable as the workers' are: keyed with the installation's secret.
  const auto secret = store.shared_secret(kInstallationSecretName, new_installation_secret());
  if (!secret) {
    error = "the store could not give the installation secret";
    return std::nullopt;
  }
  GenerateSummary sum;
  const std::int64_t end =
      o.end_ms > 0 ? o.end_ms
                   : SystemClock::instance().now_ms() / kRollupBucketMs * kRollupBucketMs;
  const std::int64_t start = end - o.days * kDayMs;
  sum.from_ms = start;
  sum.to_ms = end;

  Draw d(o.seed);
  World w;
  if (make_accounts(store, o, start, d, w) != StoreStatus::kOk) {
    error = "the store refused an account (a seller, campaign or buyer)";
    return std::nullopt;
  }
  for (const auto& s : w.sellers) sum.seller_ids.push_back(s.seller.id);
  for (const auto& b : w.buyers) sum.buyer_ids.push_back(b.buyer.id);
  std::map<std::string, const GenBuyer*> buyer_by_id;
  for (const auto& b : w.buyers) buyer_by_id[b.buyer.id] = &b;
  std::map<std::string, const Campaign*> campaign_by_id;
  for (const auto& c : w.campaigns) campaign_by_id[c.id] = &c;
  std::map<std::string, const Seller*> seller_by_id;
  for (const auto& s : w.sellers) seller_by_id[s.seller.id] = &s.seller;

  const std::vector<std::int64_t> times = arrivals(o.leads, start, end, d);
  std::int64_t rows = 0;
  auto last_print = std::chrono::steady_clock::now();
  constexpr std::size_t kRecent = 4096;  // people of a vertical a duplicate may repeat

  for (std::size_t first = 0; first < times.size(); first += static_cast<std::size_t>(o.batch)) {
    const std::size_t last = std::min(times.size(), first + static_cast<std::size_t>(o.batch));
    std::vector<Lead> leads;
    std::vector<OutcomeRecord> outcomes;
    std::vector<ReturnRequest> returns;
    std::vector<SearchKeys> keys;
    leads.reserve(last - first);
    keys.reserve(last - first);
    outcomes.reserve(last - first);
    for (std::size_t i = first; i < last; ++i) {
      Lead l = make_lead(w, d, times[i], static_cast<std::int64_t>(i));
      // A duplicate repeats a recent person of the vertical (the dedupe window is days).
      auto& recent = w.recent[l.vertical];
      const bool duplicate = !recent.empty() && d.chance(o.duplicate_rate);
      if (duplicate) {
        const Person& p = recent[static_cast<std::size_t>(d.bits() % recent.size())];
        l.first_name = p.first;
        l.last_name = p.last;
        l.email = p.email;
        l.phone = p.phone;
      } else {
        Person p{l.first_name, l.last_name, l.email, l.phone};
        if (recent.size() < kRecent) {
          recent.push_back(std::move(p));
        } else {
          recent[w.recent_next[l.vertical]++ % kRecent] = std::move(p);
        }
      }
      keys.push_back(search_keys_of(l, *secret));
      const Campaign* campaign = l.campaign_id.empty() ? nullptr : campaign_by_id.at(l.campaign_id);
      OutcomeRecord out;
      out.lead_id = l.id;
      if (duplicate) {
        out.distribution.status = DeliveryStatus::kDuplicate;
        out.distribution.reason = "duplicate";
        out.distribution.decided_at_ms = l.received_at_ms + d.between(2, 30);
        ++sum.duplicates;
      } else {
        out.distribution = auction(w, d, l, *seller_by_id.at(l.seller_id), campaign, sum);
      }
      const Distribution& dist = out.distribution;
      switch (dist.status) {
        case DeliveryStatus::kDelivered:
          ++sum.sold;
          break;
        case DeliveryStatus::kUnsold:
          ++sum.unsold;
          break;
        case DeliveryStatus::kFailed:
          ++sum.failed;
          break;
        default:
          break;
      }
      for (const Sale& s : dist.sales) {
        ++sum.sales;
        const GenBuyer& b = *buyer_by_id.at(s.buyer_id);
        if (!d.chance(b.return_rate)) continue;
        // Returned within the buyer's window, if that moment has come by the end.
        const std::int64_t window = b.buyer.return_window_days * kDayMs;
        const std::int64_t at = dist.decided_at_ms + d.between(kHourMs, window - kHourMs);
        if (at >= end) continue;
        ReturnRequest r;
        r.lead_id = l.id;
        r.buyer_id = s.buyer_id;
        r.reason = d.chance(0.1) ? "other" : d.pick(kNoteless);
        if (r.reason == "other") r.note = "customer says they never asked";
        r.by_key_id = b.key_id;
        r.at_ms = at;
        r.window_ms = window;
        returns.push_back(std::move(r));
      }
      if (campaign && d.chance(o.invalid_rate)) {
        const std::int64_t at = l.received_at_ms - d.between(0, 60'000);
        if (at >= start) {
          store.count_invalid(campaign->id, at);
          ++sum.invalid;
          if (o.keep_invalid) sum.invalid_posts.push_back({campaign->id, at});
        }
      }
      leads.push_back(std::move(l));
      outcomes.push_back(std::move(out));
    }
    const auto inserted = store.insert_leads(leads, keys);
    if (inserted.size() != leads.size()) {
      error = "the store refused a batch of leads (insert_leads)";
      return std::nullopt;
    }
    for (std::size_t i = 0; i < inserted.size(); ++i)
      if (!inserted[i].inserted) {
        error = "lead " + leads[i].id + " was already there";
        return std::nullopt;
      }
    const auto recorded = store.record_outcomes(outcomes);
    for (std::size_t i = 0; i < recorded.size(); ++i)
      if (recorded[i] != StoreStatus::kOk) {
        error = "the store refused the outcome of lead " + outcomes[i].lead_id;
        return std::nullopt;
      }
    const auto returned = store.record_returns(returns);
    for (std::size_t i = 0; i < returned.size(); ++i) {
      if (returned[i].status != ReturnStatus::kReturned) {
        error = "the store refused the return of lead " + returns[i].lead_id;
        return std::nullopt;
      }
      ++sum.returns;
    }
    sum.leads += static_cast<std::int64_t>(leads.size());
    // Rows: the lead, its sales and their ledger entries, each return and its entry.
    rows += static_cast<std::int64_t>(leads.size()) + 2 * static_cast<std::int64_t>(returns.size());
    for (const auto& out : outcomes)
      rows += 2 * static_cast<std::int64_t>(out.distribution.sales.size());
    if (std::chrono::steady_clock::now() - last_print > std::chrono::seconds(5)) {
      last_print = std::chrono::steady_clock::now();
      print_progress(o.progress, o, sum.leads, rows, elapsed());
    }
  }
  sum.seconds = elapsed();
  print_progress(o.progress, o, sum.leads, rows, sum.seconds);
  return sum;
}

int run_generate(Store& store, const std::map<std::string, std::string>& flags) {
  static const char* kKnown[] = {"leads", "days",  "seed",           "sellers",     "buyers",
                                 "end",   "batch", "duplicate-rate", "return-rate", "invalid-rate"};
  GenerateOptions o;
  std::string bad;
  for (const auto& [name, value] : flags)
    if (std::find_if(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return name == k; }) == std::end(kKnown))
      bad = "unknown flag --" + name;
  const auto number = [&](const char* name, auto& into) {
    const auto it = flags.find(name);
    if (it == flags.end()) return;
    try {
      std::size_t used = 0;
      const long long v = std::stoll(it->second, &used);
      if (used != it->second.size()) throw std::invalid_argument(name);
      into = static_cast<std::remove_reference_t<decltype(into)>>(v);
    } catch (const std::exception&) {
      bad = std::string("--") + name + " must be a whole number";
    }
  };
  const auto rate = [&](const char* name, double& into) {
    const auto it = flags.find(name);
    if (it == flags.end()) return;
    try {
      std::size_t used = 0;
      into = std::stod(it->second, &used);
      if (used != it->second.size() || into < 0 || into > 1) throw std::invalid_argument(name);
    } catch (const std::exception&) {
      bad = std::string("--") + name + " must be a number from 0 to 1";
    }
  };
  if (!flags.count("leads") || !flags.count("days")) bad = "generate needs --leads and --days";
  number("leads", o.leads);
  number("days", o.days);
  number("seed", o.seed);
  number("sellers", o.sellers);
  number("buyers", o.buyers);
  number("batch", o.batch);
  rate("duplicate-rate", o.duplicate_rate);
  rate("return-rate", o.return_rate);
  rate("invalid-rate", o.invalid_rate);
  if (const auto it = flags.find("end"); it != flags.end()) {
    if (const auto at = parse_rfc3339_ms(it->second)) {
      o.end_ms = *at;
    } else {
      number("end", o.end_ms);
    }
  }
  if (!bad.empty()) {
    std::fprintf(stderr, "leadflow-admin: %s\n", bad.c_str());
    return 2;
  }
  o.progress = stderr;
  std::string error;
  const auto sum = generate(store, o, error);
  if (!sum) {
    std::fprintf(stderr, "leadflow-admin: generate: %s\n", error.c_str());
    return 1;
  }
  const nlohmann::json out = {
      {"leads", sum->leads},
      {"duplicates", sum->duplicates},
      {"sold", sum->sold},
      {"unsold", sum->unsold},
      {"failed", sum->failed},
      {"sales", sum->sales},
      {"returns", sum->returns},
      {"invalid", sum->invalid},
      {"pings", sum->pings},
      {"posts", sum->posts},
      {"from", format_rfc3339_ms(sum->from_ms)},
      {"to", format_rfc3339_ms(sum->to_ms)},
      {"seller_ids", sum->seller_ids},
      {"buyer_ids", sum->buyer_ids},
      {"seconds", std::round(sum->seconds * 10) / 10},
      {"leads_per_second",
       sum->seconds > 0 ? std::round(static_cast<double>(sum->leads) / sum->seconds) : 0.0}};
  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}

}  // namespace leadflow
