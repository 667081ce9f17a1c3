// A buyer's name is text a person reads: control characters (C0, DEL and C1) are refused;
// letters of any script are kept.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "leadflow/domain/buyer.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json buyer_named(const std::string& name) {
  return {{"name", name},
          {"verticals", {"auto_insurance"}},
          {"delivery", {{"mode", "direct_post"}, {"post_url", "https://93.184.216.34/post"}}}};
}

bool refuses_name(const std::string& name) {
  FieldErrors errors;
  buyer_from_json(buyer_named(name), nullptr, true, errors);
  for (const auto& e : errors)
    if (e.field == "name") return true;
  return false;
}

TEST(BuyerNames, ControlCharactersAreRefused) {
  for (const std::string& name :
       {std::string("a\0b", 3), std::string("a\nb"), std::string("\x1b[31mred"),
        std::string("del\x7f"), std::string("nel \xc2\x85"), std::string("csi \xc2\x9b")})
    EXPECT_TRUE(refuses_name(name)) << json(name).dump();
}

TEST(BuyerNames, LettersOfAnyScriptAreKept) {
  EXPECT_FALSE(refuses_name("Acme Insurance"));
  EXPECT_FALSE(refuses_name("Zoë Ünïcødé 李明 Ελληνικά"));
  EXPECT_FALSE(refuses_name("\xc2\xa0nbsp"));  // U+00A0 is no control character
}

}  // namespace
}  // namespace leadflow
