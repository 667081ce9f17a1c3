// The rollups' tiers: what quarter-hour deltas add to them, and the plan that answers a
// question from them (tiers.hpp).
#include "leadflow/reports/tiers.hpp"

#include <algorithm>
#include <string>

namespace leadflow::reports {
namespace {

unsigned key_bit(ReportKey k) {
  switch (k) {
    case ReportKey::kSeller:
      return kTierSeller;
    case ReportKey::kCampaign:
      return kTierCampaign;
    case ReportKey::kBuyer:
      return kTierBuyer;
    case ReportKey::kVertical:
      return kTierVertical;
    case ReportKey::kSource:
      return kTierSource;
    case ReportKey::kReason:
      return 0;  // the unsold tiers keep it always
  }
  return kTierEveryKey;
}

// The first tier of `grain` the rollup keeps that keeps every key of `needed`.
const RollupTier* best_tier(std::int64_t grain, unsigned needed, RollupKind kind) {
  for (const RollupTier& t : kRollupTiers)
    if (t.grain_ms == grain && (t.keys & needed) == needed &&
        (kind != RollupKind::kUnsold || kept_by_unsold(t)))
      return &t;
  return nullptr;
}

bool all_zero(const PerformanceFigures& f) {
  return std::all_of(f.begin(), f.end(), [](std::int64_t v) { return v == 0; });
}

}  // namespace

PerformanceKey tier_key(const RollupTier& t, const PerformanceKey& k) {
  const auto& [bucket, seller, campaign, buyer, vertical, source] = k;
  const auto keep = [&](unsigned bit, const std::string& v) {
    return (t.keys & bit) ? v : std::string();
  };
  return {bucket - bucket % t.grain_ms,  keep(kTierSeller, seller),
          keep(kTierCampaign, campaign), keep(kTierBuyer, buyer),
          keep(kTierVertical, vertical), keep(kTierSource, source)};
}

PerformanceTierDeltas performance_tiers(const PerformanceDeltas& d) {
  PerformanceTierDeltas out;
  for (const auto& [key, figures] : d) {
    if (all_zero(figures)) continue;
    for (const RollupTier& t : kRollupTiers) {
      auto [it, fresh] = out.try_emplace({t.id, tier_key(t, key)});
      if (fresh) it->second.fill(0);
      for (int i = 0; i < kPerformanceFigures; ++i) it->second[i] += figures[i];
    }
  }
  return out;
}

UnsoldTierDeltas unsold_tiers(const UnsoldDeltas& d) {
  UnsoldTierDeltas out;
  for (const auto& [key, leads] : d) {
    if (leads == 0) continue;
    const auto& [bucket, seller, campaign, buyer, vertical, source, reason] = key;
    const PerformanceKey k{bucket, seller, campaign, buyer, vertical, source};
    for (const RollupTier& t : kRollupTiers) {
      if (!kept_by_unsold(t)) continue;
      const auto [b, s, c, u, v, o] = tier_key(t, k);
      out[{t.id, {b, s, c, u, v, o, reason}}] += leads;
    }
  }
  return out;
}

std::vector<std::int64_t> sum_starts(const RollupQuery& q) {
  std::vector<std::int64_t> starts;
  if (!q.by_bucket || q.cuts.empty() || q.from_ms >= q.to_ms) return starts;
  starts.push_back(q.from_ms);
  for (std::int64_t c : q.cuts)
    if (c > q.from_ms && c < q.to_ms) starts.push_back(c);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return starts;
}

std::int64_t sum_start_of(const std::vector<std::int64_t>& starts, std::int64_t bucket) {
  const auto after = std::upper_bound(starts.begin(), starts.end(), bucket);
  return after == starts.begin() ? bucket : *(after - 1);
}

std::vector<RollupRange> plan_rollup(const RollupQuery& q, RollupKind kind) {
  std::vector<RollupRange> out;
  const auto add = [&](int tier, std::int64_t from, std::int64_t to) {
    if (from >= to) return;
    if (!out.empty() && out.back().tier == tier && out.back().to_ms == from)
      out.back().to_ms = to;
    else
      out.push_back({tier, from, to});
  };
  if (q.from_ms >= q.to_ms) return out;
  // Cut by time without the caller's cuts: every quarter hour is a sum of its own.
  if (q.by_bucket && q.cuts.empty()) {
    add(0, q.from_ms, q.to_ms);
    return out;
  }
  unsigned needed = 0;
  for (ReportKey k : q.group) needed |= key_bit(k);
  for (const auto& f : q.filters) needed |= key_bit(f.first);
  const RollupTier* day = best_tier(kTierDayMs, needed, kind);
  const RollupTier* hour = best_tier(kTierHourMs, needed, kind);

  std::vector<std::int64_t> bounds = sum_starts(q);
  if (bounds.empty()) bounds.push_back(q.from_ms);
  bounds.push_back(q.to_ms);
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    const std::int64_t end = bounds[i + 1];
    std::int64_t at = bounds[i];
    while (at < end) {
      if (day && at % kTierDayMs == 0 && at + kTierDayMs <= end) {
        add(day->id, at, at + kTierDayMs);
        at += kTierDayMs;
      } else if (hour && at % kTierHourMs == 0 && at + kTierHourMs <= end) {
        add(hour->id, at, at + kTierHourMs);
        at += kTierHourMs;
      } else {
        // Quarter hours up to the next hour, where a tier may start.
        const std::int64_t next = std::min(end, (at / kTierHourMs + 1) * kTierHourMs);
        add(0, at, next);
        at = next;
      }
    }
  }
  return out;
}

}  // namespace leadflow::reports
