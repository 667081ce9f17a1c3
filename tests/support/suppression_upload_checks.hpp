#pragma once
// A large suppression upload as it crosses the network (docs/suppression.md, "An upload's size
// and memory"): the front hands its body to the handler as it arrives, so a list sent in slow
// pieces is read whole, a bad line deep in it is named, and a client that goes away mid-upload
// changes nothing in the list. Header-only checks, run by suppression_test on a SQLite file and
// by pg_suppression_test on PostgreSQL.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "service_fixture.hpp"
#include "suppression_checks.hpp"

namespace leadflow::testing {

// PUTs `body` as text/csv in pieces of `piece` bytes, `pause` apart (a declared length, as curl
// and browsers send a file). With `give_up_at`, the client stops sending there and closes.
inline httplib::Result put_in_pieces(httplib::SSLClient& cli, const std::string& path,
                                     const std::string& key, const std::string& body,
                                     std::size_t piece, std::chrono::milliseconds pause,
                                     std::size_t give_up_at = std::string::npos) {
  return cli.Put(
      path, httplib::Headers{{"Authorization", "Bearer " + key}}, body.size(),
      [&](std::size_t offset, std::size_t, httplib::DataSink& sink) {
        if (offset >= give_up_at) return false;  // the client goes away mid-body
        const std::size_t n = std::min({piece, body.size() - offset, give_up_at - offset});
        std::this_thread::sleep_for(pause);
        return sink.write(body.data() + offset, n);
      },
      "text/csv");
}

inline void check_suppression_streamed_uploads(ServiceFixture& svc) {
  using nlohmann::json;
  using namespace std::chrono_literals;
  const std::string op = svc.operator_key();
  auto made = svc.post("/v1/suppression-lists", {{"name", "Large"}}, op);
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = json::parse(made->body)["data"]["list_id"];
  const std::string path = "/v1/suppression-lists/" + id + "/entries";
  // 200,000 e-mail addresses (about 6 MB, a hundred times the front's 64 KiB), with CRLF ends.
  std::string list = "email\r\n";
  for (int i = 0; i < 200'000; ++i) list += "Person." + std::to_string(i) + "@Streamed.example\r\n";
  auto cli = svc.https();
  cli->set_write_timeout(30, 0);
  cli->set_read_timeout(60, 0);

  // Sent in slow pieces that cut lines (and CRLFs) anywhere: read whole.
  auto filled = put_in_pieces(*cli, path, op, list, 99'991, 20ms);
  ASSERT_TRUE(filled) << httplib::to_string(filled.error());
  ASSERT_EQ(filled->status, 200) << filled->body;
  const json data = json::parse(filled->body)["data"];
  EXPECT_EQ(data["entries"], 200'000);
  EXPECT_EQ(data["upload"]["read"], 200'000);
  ASSERT_TRUE(wait_for_suppression_entries(svc, 200'000));

  // A bad line deep in a large upload: named, nothing replaced.
  std::string bad = list;
  bad.insert(bad.find("Person.150000@"), "not an entry\r\n");
  auto refused = put_in_pieces(*cli, path, op, bad, 65'537, 1ms);
  ASSERT_TRUE(refused) << httplib::to_string(refused.error());
  ASSERT_EQ(refused->status, 422) << refused->body;
  EXPECT_EQ(json::parse(refused->body)["rejected_lines"], json({150'002}));
  EXPECT_NE(refused->body.find("line 150002"), std::string::npos) << refused->body;

  // A replacement whose client goes away halfway: the list keeps its entries.
  const std::string before =
      json::parse(svc.get(path.substr(0, path.size() - 8), op)->body)["data"]["uploaded_at"];
  std::string other = "email\n";
  for (int i = 0; i < 100'000; ++i) other += "other." + std::to_string(i) + "@gone.example\n";
  auto gone_cli = svc.https();
  auto gone = put_in_pieces(*gone_cli, path, op, other, 200'000, 10ms, other.size() / 2);
  EXPECT_FALSE(gone);  // the client gave up: no answer
  std::this_thread::sleep_for(500ms);
  const json after = json::parse(svc.get(path.substr(0, path.size() - 8), op)->body)["data"];
  EXPECT_EQ(after["entries"], 200'000) << after.dump();
  EXPECT_EQ(after["uploaded_at"], before);
  EXPECT_TRUE(wait_for_suppression_entries(svc, 200'000));

  // The front goes on: a small upload after it is read as before.
  auto small = cli->Put(path, httplib::Headers{{"Authorization", "Bearer " + op}},
                        "a@example.com\n", "text/csv");
  ASSERT_TRUE(small);
  EXPECT_EQ(small->status, 200) << small->body;
  EXPECT_EQ(json::parse(small->body)["data"]["entries"], 1);
}

}  // namespace leadflow::testing
