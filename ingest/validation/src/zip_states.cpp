// USPS state for a ZIP code by its three-digit prefix (the "sectional center" prefix).
//
// The table is written from the USPS prefix assignments (Publication 65 / the National Five-Digit
// ZIP Code and Post Office Directory). Prefixes USPS has never assigned (000-004, 099, 213, 269,
// 343, ...) map to "" so a made-up ZIP such as 00123 is refused at intake. A prefix shared by two
// places is mapped to the state that holds most of it: 969 (Guam, Northern Mariana Islands, Palau,
// Micronesia, Marshall Islands) is "GU"; 967 (Hawaii and American Samoa's 96799) is "HI".
// Military mail: 090-098 "AE" (Europe, Middle East, Africa, Canada), 340 "AA" (the Americas),
// 962-966 "AP" (Pacific).
#include <array>
#include <string_view>

#include "leadflow/base/text.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {
namespace {

struct PrefixRange {
  int first;
  int last;
  char state[3];
};

// Inclusive ranges, applied in order; the unassigned list below is applied last.
constexpr PrefixRange kRanges[] = {
    {5, 5, "NY"},     {6, 7, "PR"},     {8, 8, "VI"},     {9, 9, "PR"},     {10, 27, "MA"},
    {28, 29, "RI"},   {30, 38, "NH"},   {39, 49, "ME"},   {50, 54, "VT"},   {55, 55, "MA"},
    {56, 59, "VT"},   {60, 69, "CT"},   {70, 89, "NJ"},   {90, 98, "AE"},   {100, 149, "NY"},
    {150, 196, "PA"}, {197, 199, "DE"}, {200, 200, "DC"}, {201, 201, "VA"}, {202, 205, "DC"},
    {206, 219, "MD"}, {220, 246, "VA"}, {247, 268, "WV"}, {270, 289, "NC"}, {290, 299, "SC"},
    {300, 319, "GA"}, {320, 349, "FL"}, {340, 340, "AA"}, {350, 369, "AL"}, {370, 385, "TN"},
    {386, 397, "MS"}, {398, 399, "GA"}, {400, 427, "KY"}, {430, 459, "OH"}, {460, 479, "IN"},
    {480, 499, "MI"}, {500, 528, "IA"}, {530, 549, "WI"}, {550, 567, "MN"}, {569, 569, "DC"},
    {570, 577, "SD"}, {580, 588, "ND"}, {590, 599, "MT"}, {600, 629, "IL"}, {630, 658, "MO"},
    {660, 679, "KS"}, {680, 693, "NE"}, {700, 714, "LA"}, {716, 729, "AR"}, {730, 731, "OK"},
    {733, 733, "TX"}, {734, 749, "OK"}, {750, 799, "TX"}, {800, 816, "CO"}, {820, 831, "WY"},
    {832, 838, "ID"}, {840, 847, "UT"}, {850, 865, "AZ"}, {870, 884, "NM"}, {885, 885, "TX"},
    {889, 898, "NV"}, {900, 961, "CA"}, {962, 966, "AP"}, {967, 968, "HI"}, {969, 969, "GU"},
    {970, 979, "OR"}, {980, 994, "WA"}, {995, 999, "AK"},
};

// Prefixes inside the ranges above that USPS has not assigned.
constexpr int kUnassigned[] = {
    213, 343, 345, 348, 353, 419, 517, 518, 519, 533, 536, 552, 621, 632, 642, 643,
    663, 682, 702, 709, 742, 771, 854, 858, 861, 862, 876, 892, 896, 909, 929, 987,
};

using StateTable = std::array<std::array<char, 2>, 1000>;

constexpr StateTable build_table() {
  StateTable t{};
  for (auto& s : t) s = {'\0', '\0'};
  for (const auto& r : kRanges) {
    for (int p = r.first; p <= r.last; ++p)
      t[static_cast<std::size_t>(p)] = {r.state[0], r.state[1]};
  }
  for (int p : kUnassigned) t[static_cast<std::size_t>(p)] = {'\0', '\0'};
  return t;
}

constexpr StateTable kTable = build_table();

}  // namespace

std::string_view state_for_zip(std::string_view zip5) {
  if (zip5.size() < 3 || !is_digit(zip5[0]) || !is_digit(zip5[1]) || !is_digit(zip5[2])) return {};
  const auto prefix =
      static_cast<std::size_t>((zip5[0] - '0') * 100 + (zip5[1] - '0') * 10 + (zip5[2] - '0'));
  const auto& entry = kTable[prefix];
  if (entry[0] == '\0') return {};
  return std::string_view(entry.data(), 2);
}

}  // namespace leadflow
