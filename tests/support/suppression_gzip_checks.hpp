#pragma once
// A suppression upload sent gzip (Content-Encoding: gzip) over real HTTPS (docs/suppression.md,
// "An upload sent gzip"): inflated as it arrives, large or small, members one after another;
// a damaged or cut gzip is 400 naming it, one that inflates past 1 GiB is 413, another coding
// 415, and in each case the list is left as it was. Header-only checks, run by suppression_test
// on a SQLite file and by pg_suppression_test on PostgreSQL.
#include <gtest/gtest.h>

#include <zlib.h>

#include <chrono>
#include <string>
#include <string_view>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "gzip_member.hpp"
#include "service_fixture.hpp"
#include "suppression_checks.hpp"

namespace leadflow::testing {

// A gzip body of `members` members of 64 MiB of NUL bytes each: about a thousandth of its
// inflated size (one member made, then repeated, as `cat` would join them).
inline std::string gzip_bomb(int members) {
  const std::string member = gzip_member(std::string(std::size_t{64} << 20, '\0'));
  std::string out;
  for (int i = 0; i < members; ++i) out += member;
  return out;
}

inline void check_suppression_gzip_uploads(ServiceFixture& svc) {
  using nlohmann::json;
  const std::string op = svc.operator_key();
  const std::string seller = svc.add_seller();
  const std::string seller_key = svc.add_api_key({{"name", "seller"}, {"seller_id", seller}});
  auto made = svc.post("/v1/suppression-lists", {{"name", "Gzipped"}}, op);
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = json::parse(made->body)["data"]["list_id"];
  const std::string path = "/v1/suppression-lists/" + id + "/entries";
  auto cli = svc.https();
  cli->set_write_timeout(60, 0);
  cli->set_read_timeout(120, 0);
  const auto put = [&](const std::string& body, const std::string& coding) {
    httplib::Headers h{{"Authorization", "Bearer " + op}};
    if (!coding.empty()) h.emplace("Content-Encoding", coding);
    return cli->Put(path, h, body, "text/csv");
  };
  const auto list_now = [&] {
    return json::parse(svc.get("/v1/suppression-lists/" + id, op)->body)["data"];
  };

  // 100,000 e-mails (about 3 MB, a few hundred KB gzip: past the front's 64 KiB, so read as it
  // arrives), in two members one after another as `cat a.gz b.gz` makes them.
  std::string first = "email,source\r\n", second;
  for (int i = 0; i < 60'000; ++i) first += "Gz." + std::to_string(i) + "@Example.com,crm\r\n";
  for (int i = 60'000; i < 100'000; ++i) second += "gz." + std::to_string(i) + "@example.com\n";
  const std::string body = gzip_member(first) + gzip_member(second);
  ASSERT_GT(body.size(), 64u * 1024);
  ASSERT_LT(body.size(), (first.size() + second.size()) / 4);
  auto filled = put(body, "gzip");
  ASSERT_TRUE(filled) << httplib::to_string(filled.error());
  ASSERT_EQ(filled->status, 200) << filled->body;
  EXPECT_EQ(json::parse(filled->body)["data"]["entries"], 100'000);
  EXPECT_EQ(json::parse(filled->body)["data"]["upload"]["read"], 100'000);
  ASSERT_TRUE(wait_for_suppression_entries(svc, 100'000));
  json listed = sample_lead(9301);
  listed["email"] = "gz.99999@example.com";
  auto refused = svc.post("/v1/leads", listed, seller_key);
  ASSERT_EQ(refused->status, 422) << refused->body;
  const json before = list_now();

  // Damaged, cut short, no gzip at all, another coding: refused, the list as it was.
  std::string damaged = body;
  damaged[damaged.size() / 3] = static_cast<char>(damaged[damaged.size() / 3] ^ 0x5a);
  const std::string small = gzip_member("one@example.com\ntwo@example.com\n");
  struct Bad {
    std::string body, coding;
    int status;
    std::string names;
  };
  for (const Bad& bad :
       {Bad{damaged, "gzip", 400, "damaged"},
        Bad{body.substr(0, body.size() - 5), "gzip", 400, "ends before"},
        Bad{small.substr(0, small.size() / 2), "gzip", 400, "ends before"},
        Bad{"one@example.com\n", "gzip", 400, "damaged"}, Bad{small, "br", 415, "Content-Encoding"},
        Bad{small, "gzip, br", 415, "Content-Encoding"}}) {
    auto r = put(bad.body, bad.coding);
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, bad.status) << r->body;
    EXPECT_NE(r->body.find(bad.names), std::string::npos) << r->body;
    if (bad.status == 400) {
      EXPECT_NE(r->body.find("gzip"), std::string::npos) << r->body;
      EXPECT_NE(r->body.find("nothing was replaced"), std::string::npos) << r->body;
    }
    EXPECT_EQ(list_now(), before);
  }

  // A bomb: 1 MB of gzip that inflates past 1 GiB, the limit of a clear body. 413 once the
  // limit is passed, the list as it was.
  const std::string bomb = gzip_bomb(17);  // 1088 MiB
  ASSERT_LT(bomb.size(), 2u << 20);
  const auto started = std::chrono::steady_clock::now();
  auto too_far = put(bomb, "gzip");
  ASSERT_TRUE(too_far) << httplib::to_string(too_far.error());
  EXPECT_EQ(too_far->status, 413) << too_far->body;
  EXPECT_NE(too_far->body.find("inflates past 1 GiB"), std::string::npos) << too_far->body;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(60));
  EXPECT_EQ(list_now(), before);

  // The front goes on: a small gzip upload (64 KiB or less: the body comes whole) replaces it.
  auto replaced = put(small, "x-gzip");
  ASSERT_TRUE(replaced) << httplib::to_string(replaced.error());
  ASSERT_EQ(replaced->status, 200) << replaced->body;
  EXPECT_EQ(json::parse(replaced->body)["data"]["entries"], 2);
  ASSERT_TRUE(wait_for_suppression_entries(svc, 2));
  EXPECT_EQ(svc.post("/v1/leads", listed, seller_key)->status, 201);
}

}  // namespace leadflow::testing
