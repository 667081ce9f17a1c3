#include "viewer.hpp"

namespace leadflow {

Viewer viewer_of(IngestContext& ctx, const ApiKey& key) {
  Viewer v = Viewer::of(key);
  if (v.is_buyer()) v.seller_names = ctx.buyer_visibility.shows_seller_names(v.buyer_id);
  return v;
}

SellerLabels seller_labels(IngestContext& ctx, const Viewer& viewer) {
  SellerLabels labels;
  labels.secret = ctx.visibility_secret;
  if (viewer.is_buyer() && viewer.seller_names)
    labels.name_of = [&ctx](const std::string& seller_id) {
      // A name the store cannot read now is shown as a label, as a seller without one.
      const auto seller = ctx.accounts.get_seller(seller_id).value;
      return seller ? seller->name : std::string();
    };
  return labels;
}

}  // namespace leadflow
