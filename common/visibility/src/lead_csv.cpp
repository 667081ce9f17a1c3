// A lead export's columns, asked of the visibility table class by class.
#include "leadflow/visibility/lead_csv.hpp"

#include <initializer_list>

namespace leadflow {

using nlohmann::json;

std::vector<std::string> lead_csv_columns(const Viewer& viewer) {
  const auto sees = [&viewer](FieldClass c) { return access(viewer, c) != Access::kNone; };
  std::vector<std::string> out = {"lead_id", "created_at", "status", "vertical", "source"};
  if (sees(FieldClass::kSellerIdentity)) {
    out.insert(out.end(), {"seller_id", "campaign_id"});
    if (viewer.is_buyer()) out.push_back("seller_name");
  }
  if (viewer.is_buyer()) out.push_back("source_code");
  if (sees(FieldClass::kBuyerIdentity)) out.push_back("buyer_id");
  if (sees(FieldClass::kBuyerMoney)) out.push_back("price");
  if (sees(FieldClass::kSellerMoney)) out.push_back("payout");
  out.insert(out.end(), {"currency", "decided_at"});
  if (sees(FieldClass::kPerson))
    out.insert(out.end(),
               {"first_name", "last_name", "email", "phone", "zip_code", "state", "erased_at"});
  return out;
}

json lead_csv_row(const json& projected) {
  json row = projected;
  if (auto d = projected.find("distribution"); d != projected.end() && d->is_object()) {
    for (const char* f : {"buyer_id", "price", "payout", "currency", "decided_at"})
      if (auto it = d->find(f); it != d->end()) row[f] = *it;
    row.erase("distribution");
  }
  return row;
}

}  // namespace leadflow
