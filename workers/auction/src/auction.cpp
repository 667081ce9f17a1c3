#include "leadflow/auction/auction.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "leadflow/base/tz.hpp"

namespace leadflow {
namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

const CustomValue* find_field(const CustomFields& fields, const std::string& name) {
  for (const auto& [k, v] : fields)
    if (k == name) return &v;
  return nullptr;
}

// Compares a lead's value with a rule operand: numbers numerically (a numeric string counts as a
// number), strings exactly. Returns -2 when the two cannot be compared.
int compare(const CustomValue& value, const nlohmann::json& operand) {
  if (operand.is_number()) {
    // In long double, whose 64-bit mantissa holds every int64 and every double exactly: an
    // integer past 2^53 compares by all its digits.
    long double v;
    if (const auto* d = std::get_if<double>(&value)) {
      v = *d;
    } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
      v = static_cast<long double>(*i);
    } else {
      const std::string& s = std::get<std::string>(value);
      char* end = nullptr;
      v = std::strtold(s.c_str(), &end);
      if (s.empty() || end != s.c_str() + s.size()) return -2;
    }
    const long double o =
        operand.is_number_unsigned()  ? static_cast<long double>(operand.get<std::uint64_t>())
        : operand.is_number_integer() ? static_cast<long double>(operand.get<std::int64_t>())
                                      : static_cast<long double>(operand.get<double>());
    return v < o ? -1 : (v > o ? 1 : 0);
  }
  if (operand.is_string()) {
    const std::string o = operand.get<std::string>();
    std::string v;
    if (const auto* s = std::get_if<std::string>(&value)) {
      v = *s;
    } else {
      return -2;
    }
    return v < o ? -1 : (v > o ? 1 : 0);
  }
  if (operand.is_boolean()) {
    const auto* s = std::get_if<std::string>(&value);
    if (!s) return -2;
    return *s == (operand.get<bool>() ? "true" : "false") ? 0 : 1;
  }
  return -2;
}

}  // namespace

bool custom_rule_matches(const CustomRule& rule, const CustomFields& fields) {
  const CustomValue* value = find_field(fields, rule.field);
  using Op = CustomRule::Op;
  if (rule.op == Op::kExists) return value != nullptr;
  if (value == nullptr) return rule.op == Op::kNe || rule.op == Op::kNin;
  switch (rule.op) {
    case Op::kEq:
      return compare(*value, rule.value) == 0;
    case Op::kNe:
      return compare(*value, rule.value) != 0;
    case Op::kIn:
    case Op::kNin: {
      bool found = false;
      if (rule.value.is_array())
        for (const auto& o : rule.value)
          if (compare(*value, o) == 0) found = true;
      return rule.op == Op::kIn ? found : !found;
    }
    case Op::kGt:
      return compare(*value, rule.value) == 1;
    case Op::kGte: {
      const int c = compare(*value, rule.value);
      return c == 0 || c == 1;
    }
    case Op::kLt:
      return compare(*value, rule.value) == -1;
    case Op::kLte: {
      const int c = compare(*value, rule.value);
      return c == 0 || c == -1;
    }
    case Op::kExists:
      break;
  }
  return false;
}

std::string static_ineligibility(const Buyer& b, const Lead& lead, std::int64_t unix_s) {
  if (!b.active) return "paused";
  if (!contains(b.verticals, lead.vertical)) return "vertical";
  if (!b.states.empty() && !contains(b.states, lead.state)) return "filter:states";
  if (contains(b.exclude_states, lead.state)) return "filter:exclude_states";
  if (!b.zip_prefixes.empty() &&
      std::none_of(b.zip_prefixes.begin(), b.zip_prefixes.end(),
                   [&](const std::string& p) { return lead.zip_code.rfind(p, 0) == 0; }))
    return "filter:zip_prefixes";
  if (!b.sources.empty() && !contains(b.sources, lead.source)) return "filter:sources";
  for (const auto& rule : b.custom_rules)
    if (!custom_rule_matches(rule, lead.custom_fields)) return "filter:custom:" + rule.field;
  if (!schedule_open(b.schedule, unix_s)) return "schedule";
  return "";
}

namespace {

// Orders bids by `amount` (a member), descending, then priority, then a weighted random draw.
std::vector<Bid> rank_by(std::vector<Bid> bids, std::mt19937_64& rng, Cents Bid::*amount) {
  // Weighted random order among equals: sort by a key u^(1/w) (Efraimidis-Spirakis), so a buyer
  // of weight w leads a group of equals with probability proportional to w.
  std::uniform_real_distribution<double> unit(1e-12, 1.0);
  std::vector<std::pair<double, Bid>> keyed;
  keyed.reserve(bids.size());
  for (auto& b : bids)
    keyed.emplace_back(std::pow(unit(rng), 1.0 / std::max(1, b.buyer->weight)), std::move(b));
  std::sort(keyed.begin(), keyed.end(), [amount](const auto& x, const auto& y) {
    if (x.second.*amount != y.second.*amount) return x.second.*amount > y.second.*amount;
    if (x.second.buyer->priority != y.second.buyer->priority)
      return x.second.buyer->priority > y.second.buyer->priority;
    return x.first > y.first;
  });
  std::vector<Bid> out;
  out.reserve(keyed.size());
  for (auto& [key, bid] : keyed) out.push_back(std::move(bid));
  return out;
}

}  // namespace

std::vector<Bid> rank_bids(std::vector<Bid> bids, std::mt19937_64& rng) {
  std::erase_if(bids, [](const Bid& b) { return b.amount <= 0 || b.amount < b.buyer->min_bid; });
  return rank_by(std::move(bids), rng, &Bid::amount);
}

std::vector<Bid> rank_shared_bids(std::vector<Bid> bids, std::mt19937_64& rng) {
  std::erase_if(bids, [](const Bid& b) { return b.shared <= 0; });
  return rank_by(std::move(bids), rng, &Bid::shared);
}

std::vector<Bid> rank_aged_bids(std::vector<Bid> bids, std::mt19937_64& rng) {
  std::erase_if(bids, [](const Bid& b) { return b.amount <= 0; });
  return rank_by(std::move(bids), rng, &Bid::amount);
}

bool shared_earns_more(const std::vector<Bid>& exclusive, const std::vector<Bid>& shared,
                       int max_sales) {
  if (max_sales < 2 || shared.empty()) return false;
  Cents together = 0;
  for (std::size_t i = 0; i < shared.size() && i < static_cast<std::size_t>(max_sales); ++i)
    together += shared[i].shared;
  return together > (exclusive.empty() ? 0 : exclusive.front().amount);
}

}  // namespace leadflow
