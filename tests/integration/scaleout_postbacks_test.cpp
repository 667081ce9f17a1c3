// Postbacks in the scale-out shape: the senders inside two leadflow-worker processes share one
// outbox in PostgreSQL, while leads stream through two ingests on the real Kafka cluster and one
// worker is killed with -9 in the middle of its deliveries (tests/support/scaleout_fixture.hpp).
// The seller's endpoint answers slowly, so the killed sender holds claimed events in flight:
// their lease runs out and a sender takes them again. Every sold lead is told once to the seller
// under one event id (delivered at least once, never invented twice), signed, with only what the
// seller may see (docs/postbacks.md).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "postback_receiver.hpp"
#include "scaleout_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using Mode = PostbackReceiver::Mode;

class ScaleOutPostbacks : public ScaleOut {
 protected:
  void SetUp() override {
    receiver_ = std::make_unique<PostbackReceiver>(receiver_dir_.path());
    ScaleOut::SetUp();
  }
  void more_env(std::map<std::string, std::string>& env) const override {
    env["LEADFLOW_BUYER_CA_FILE"] = receiver_->cert_file();  // the senders trust the receiver
  }

  /// Posts `body` with `key` to `path` on ingest `i`; the answer's body when it has `status`.
  json call(int i, const std::string& path, const std::string& key, const json& body, int status) {
    auto r = client(i)->Post(path, auth(key), body.dump(), "application/json");
    EXPECT_TRUE(r && r->status == status) << path << ": " << (r ? r->body : "no answer");
    return r && r->status == status ? json::parse(r->body) : json();
  }

  TempDir receiver_dir_;
  std::unique_ptr<PostbackReceiver> receiver_;
};

TEST_F(ScaleOutPostbacks, EverySoldLeadIsToldOnceAcrossAKill9OfAWorkerMidDelivery) {
  const json seller = call(0, "/v1/sellers", "", {{"name", "Acme"}}, 201);
  ASSERT_TRUE(seller.is_object());
  const std::string seller_id = seller["data"]["seller_id"];
  const json key = call(0, "/v1/api-keys", "", {{"name", "acme"}, {"seller_id", seller_id}}, 201);
  ASSERT_TRUE(key.is_object());
  const std::string seller_key = key["data"]["key"];
  const json made =
      call(1, "/v1/postback-endpoints", seller_key,
           {{"url", receiver_->url("/acme")}, {"events", {"lead.sold", "lead.unsold"}}}, 201);
  ASSERT_TRUE(made.is_object());
  const std::string endpoint_id = made["data"]["id"];
  // Each attempt takes the receiver 300 ms, so a sender always has events in flight.
  receiver_->set("/acme", made["data"]["secret"], Mode::kSlow, 503, 300ms);
  // The workers learn of an endpoint made in another process within 2 s (docs/postbacks.md).
  std::this_thread::sleep_for(3s);

  std::mutex mu;
  std::set<std::string> acked;
  std::atomic<bool> stop{false};
  std::atomic<int> salt{20'000};
  std::vector<std::thread> posters;
  for (int t = 0; t < 2; ++t) {
    posters.emplace_back([&, t] {
      auto c = client(t);
      while (!stop) {
        auto r = c->Post("/v1/leads",
                         {{"Authorization", "Bearer " + seller_key}, {"Prefer", "respond-async"}},
                         sample_lead(salt++).dump(), "application/json");
        if (r && r->status == 202) {
          std::lock_guard lock(mu);
          acked.insert(json::parse(r->body)["lead_id"].get<std::string>());
        }
        std::this_thread::sleep_for(100ms);  // ~20 leads/s in all, under the key's 1000/min
      }
    });
  }
  // Kill worker 0 once its sender has delivered and holds more in flight.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (worker_metric(0, "leadflow_postback_in_flight") <= 0 ||
         worker_metric(0, "leadflow_postback_attempts_total") <= 0) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "worker 0 never sent a postback";
    std::this_thread::sleep_for(50ms);
  }
  const std::int64_t killed_at_ms = SystemClock::instance().now_ms();
  workers_[0].process->kill_hard();
  std::this_thread::sleep_for(1s);
  workers_[0].start();
  std::this_thread::sleep_for(4s);
  stop = true;
  for (auto& p : posters) p.join();

  ASSERT_GT(acked.size(), 50u) << "too few leads were acknowledged to prove anything";
  const auto missing = not_final_after(acked, 90s);
  ASSERT_TRUE(missing.empty()) << missing.size() << " leads never reached a final status";
  EXPECT_TRUE(sold_twice().empty());
  EXPECT_TRUE(not_delivered(acked).empty());

  // Every lead told (the killed sender's claims may take their lease, a minute, to go again).
  const auto told = [&](const std::vector<PostbackReceiver::Received>& all) {
    std::set<std::string> leads;
    for (const auto& r : all)
      if (r.answered == 200 && r.body.is_object())
        leads.insert(r.body["data"].value("lead_id", ""));
    for (const auto& id : acked)
      if (!leads.contains(id)) return false;
    return true;
  };
  ASSERT_TRUE(receiver_->wait_for(told, 150s)) << "some sold leads were never told to the seller";

  // Nothing stays pending: the killed sender's claims (events the receiver may already have
  // taken, their delivery never recorded) come back after their lease, a minute, and go again.
  const auto deadline_pending = std::chrono::steady_clock::now() + 120s;
  auto backlog = store_->postback_backlog();
  while ((!backlog || backlog->pending != 0) &&
         std::chrono::steady_clock::now() < deadline_pending) {
    std::this_thread::sleep_for(500ms);
    backlog = store_->postback_backlog();
  }
  ASSERT_TRUE(backlog.has_value());
  EXPECT_EQ(backlog->pending, 0);
  if (backlog->pending != 0) {
    const std::int64_t now_ms = SystemClock::instance().now_ms();
    for (const auto& d : store_->list_postback_deliveries(endpoint_id, "", 1000)
                             .value_or(std::vector<PostbackDelivery>{}))
      if (d.state == PostbackState::kPending) {
        ADD_FAILURE() << "pending " << d.facts.event_id << ": " << d.attempts
                      << " attempts, last status " << d.last_status << " (" << d.last_error
                      << "), due in " << (d.next_at_ms - now_ms) << " ms";
        for (const auto& a : store_->list_postback_attempts(endpoint_id, d.facts.event_id)
                                 .value_or(std::vector<PostbackAttempt>{}))
          ADD_FAILURE() << "  attempt " << (a.at_ms - killed_at_ms)
                        << " ms after the kill: " << a.status << " " << a.error << " in "
                        << a.latency_us << " us";
      }
  }
  std::map<std::string, std::set<std::string>> events_of;  // lead → its event ids
  std::map<std::string, int> requests_of;                  // event id → requests that carried it
  const std::set<std::string> may_see = {"lead_id", "campaign_id", "status", "currency", "payout"};
  for (const auto& r : receiver_->received()) {
    EXPECT_TRUE(r.signature_ok) << r.signature;
    ASSERT_TRUE(r.body.is_object()) << r.raw_body;
    EXPECT_EQ(r.body["id"], r.event_id);
    EXPECT_EQ(r.body["type"], "lead.sold") << r.raw_body;  // every buyer bids and accepts
    for (const auto& [field, value] : r.body["data"].items())
      EXPECT_TRUE(may_see.contains(field)) << field << " is not the seller's: " << r.raw_body;
    for (const auto& sim : sims_)
      EXPECT_EQ(r.raw_body.find('"' + sim->name() + '"'), std::string::npos)
          << "a buyer named: " << r.raw_body;
    EXPECT_TRUE(r.body["data"]["payout"].is_number()) << r.raw_body;
    const std::string lead = r.body["data"].value("lead_id", "");
    EXPECT_TRUE(acked.contains(lead)) << "an event for a lead not acknowledged: " << lead;
    events_of[lead].insert(r.event_id);
    ++requests_of[r.event_id];
  }
  int again = 0;
  for (const auto& [lead, events] : events_of)
    EXPECT_EQ(events.size(), 1u) << lead << " was told under " << events.size() << " event ids";
  for (const auto& [event, n] : requests_of) again += n - 1;
  std::cout << acked.size() << " leads sold, " << requests_of.size() << " events, " << again
            << " requests sent again (at least once: the killed sender's claims)\n";
}

}  // namespace
}  // namespace leadflow::testing
