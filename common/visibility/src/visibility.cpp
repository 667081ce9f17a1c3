#include "leadflow/visibility/visibility.hpp"

#include "leadflow/base/crypto.hpp"

namespace leadflow {

Viewer Viewer::seller(std::string_view seller_id) {
  Viewer v;
  v.party = Party::kSeller;
  v.seller_id = seller_id;
  return v;
}

Viewer Viewer::buyer(std::string_view buyer_id, bool seller_names) {
  Viewer v;
  v.party = Party::kBuyer;
  v.buyer_id = buyer_id;
  v.seller_names = seller_names;
  return v;
}

Viewer Viewer::of(const ApiKey& key) {
  if (key.is_buyer()) return buyer(key.buyer_id);
  if (!key.seller_id.empty()) return seller(key.seller_id);
  return Viewer{};
}

Viewer Viewer::of(const User& user) {
  if (user.is_buyer()) return buyer(user.buyer_id);
  if (!user.seller_id.empty()) return seller(user.seller_id);
  return Viewer{};
}

Access access(const Viewer& viewer, FieldClass field) {
  switch (viewer.party) {
    case Party::kOperator:
      return Access::kAll;
    case Party::kSeller:
      switch (field) {
        case FieldClass::kPerson:
        case FieldClass::kLeadState:
        case FieldClass::kUnsoldReason:
        case FieldClass::kSellerIdentity:
        case FieldClass::kSellerMoney:
          return Access::kOwn;
        case FieldClass::kBuyerIdentity:
        case FieldClass::kBuyerMoney:
        case FieldClass::kMargin:
        case FieldClass::kOperatorRecord:
          return Access::kNone;
      }
      return Access::kNone;
    case Party::kBuyer:
      switch (field) {
        case FieldClass::kPerson:
        case FieldClass::kLeadState:
        case FieldClass::kBuyerIdentity:
        case FieldClass::kBuyerMoney:
          return Access::kOwn;
        case FieldClass::kSellerIdentity:
          // Names only where the operator chose to show them; otherwise source codes.
          return viewer.seller_names ? Access::kOwn : Access::kNone;
        case FieldClass::kUnsoldReason:
        case FieldClass::kSellerMoney:
        case FieldClass::kMargin:
        case FieldClass::kOperatorRecord:
          return Access::kNone;
      }
      return Access::kNone;
  }
  return Access::kNone;
}

bool may_see(const Viewer& viewer, FieldClass field, std::string_view seller_id,
             std::string_view buyer_id) {
  switch (access(viewer, field)) {
    case Access::kAll:
      return true;
    case Access::kNone:
      return false;
    case Access::kOwn:
      break;
  }
  if (viewer.is_seller()) return !seller_id.empty() && seller_id == viewer.seller_id;
  // A buyer's own: the value is its own buyer's, or (seller names shown) a seller's field of a
  // lead it bought, which the caller has already established by finding its purchase.
  if (field == FieldClass::kSellerIdentity) return true;
  return !buyer_id.empty() && buyer_id == viewer.buyer_id;
}

std::string new_visibility_secret() { return new_installation_secret(); }

std::string source_code(std::string_view secret, std::string_view buyer_id,
                        std::string_view seller_id) {
  std::string message;
  message.reserve(buyer_id.size() + seller_id.size() + 1);
  message.append(buyer_id).push_back('\0');
  message.append(seller_id);
  const std::string mac = hmac_sha256(secret, message);
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz234567";
  std::string code = "src_";
  // 12 characters of 5 bits: the first 60 bits of the MAC.
  std::uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits = (bits << 8) | static_cast<unsigned char>(mac[i]);
  for (int i = 0; i < 12; ++i) code.push_back(kAlphabet[(bits >> (59 - 5 * i)) & 31]);
  return code;
}

}  // namespace leadflow
