// kill -9 of the whole embedded service while leads stream in, unsold leads are offered again
// as aged leads and sold leads are returned: every acknowledged lead reaches a final status
// after restart and every re-offer runs, none is sold twice (a shared lead to no more buyers
// than its vertical allows, none of them twice, an aged lead to one buyer once), every
// acknowledged return is kept, and the ledger holds exactly one entry per sale and per return.
// The seller's postback outbox holds exactly one event per outcome, aged sale and return of its
// leads, none lost and none invented, and every one of them reaches its HTTPS endpoint after the
// restart. (kill -9 around the close of a period, on both stores: pg_close_crash_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "ingest_process.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/store/store.hpp"
#include "postback_receiver.hpp"
#include "service_fixture.hpp"

namespace leadflow::testing {
namespace {

using nlohmann::json;

using Service = IngestProcess;

Service start_service(const TempDir& dir, const std::string& key) {
  std::map<std::string, std::string> env{{"LEADFLOW_VERTICALS", dir.path() + "/verticals.json"},
                                         {"LEADFLOW_BOOTSTRAP_KEY", key},
                                         {"LEADFLOW_ALLOW_PRIVATE_BUYERS", "1"},
                                         {"LEADFLOW_WORKER_CONCURRENCY", "16"},
                                         {"LEADFLOW_HTTP_THREADS", "16"},
                                         // A re-offer's lease is three auction timeouts: one the
                                         // kill interrupted runs again 9 s later.
                                         {"LEADFLOW_AUCTION_TIMEOUT_MS", "3000"},
                                         {"LEADFLOW_LOG_LEVEL", "warn"}};
  // The postback receiver's self-signed certificate, where a test runs one: the only HTTPS
  // endpoint the service calls.
  const std::string receiver_cert = dir.path() + "/receiver-cert.pem";
  if (std::filesystem::exists(receiver_cert)) env["LEADFLOW_BUYER_CA_FILE"] = receiver_cert;
  return start_ingest_process(dir, std::move(env));
}

std::unique_ptr<httplib::SSLClient> client(const TempDir& dir, int port) {
  return ingest_client(dir, port);
}

TEST(Crash, Kill9LosesNoAcknowledgedLeadAndSellsNoneTwice) {
  TempDir dir;
  const std::string key = new_api_key_secret();
  // home_insurance leads are shared by two buyers: two shares (6.00 + 6.00) beat the best bid
  // alone (10.00), so each such lead is posted to two buyers at once.
  std::ofstream(dir.path() + "/verticals.json")
      << R"({"verticals": [{"name": "home_insurance", "max_sales": 2},)"
      << R"( {"name": "auto_insurance", "reoffer": {"delays_seconds": [1, 2]}}]})";
  auto first = start_buyer("first", 14.0, 5), second = start_buyer("second", 9.0, 5);
  std::vector<std::unique_ptr<BuyerSimulator>> sharers;
  for (const char* name : {"share1", "share2", "share3"}) {
    sharers.push_back(start_buyer(name, 10.0, 5));
    sharers.back()->set_shared_bid(6.0);
  }
  sharers[0]->set_reject_rate(0.3);       // a refused share makes room for the third buyer
  PostbackReceiver receiver(dir.path());  // before the service: its certificate is the CA file
  Service svc = start_service(dir, key);
  const httplib::Headers auth = {{"Authorization", "Bearer " + key}};
  // The buyer of aged leads never bids live; it buys the auto leads nobody bought, a second
  // later, at 2.00 (the live buyers refuse some posts, so some are unsold).
  auto aged = start_buyer("aged", 1.0, 5);
  aged->set_no_bid_rate(1.0);
  second->set_reject_rate(0.3);
  std::vector<BuyerSimulator*> all_buyers{first.get(), second.get(), aged.get()};
  for (auto& s : sharers) all_buyers.push_back(s.get());
  for (auto* sim : all_buyers) {
    const bool sharer = sim != first.get() && sim != second.get() && sim != aged.get();
    json buyer = {
        {"name", sim->name()},
        {"verticals", {sharer ? "home_insurance" : "auto_insurance"}},
        {"delivery",
         {{"mode", "ping_post"}, {"ping_url", sim->ping_url()}, {"post_url", sim->post_url()}}},
        {"duplicate_lookback_days", 0}};
    if (sim == aged.get()) {
      buyer["accepts_aged"] = true;
      buyer["pricing"] = {{"model", "bid"}, {"aged_price", 2.0}};
    }
    ASSERT_EQ(
        client(dir, svc.port)->Post("/v1/buyers", auth, buyer.dump(), "application/json")->status,
        201);
  }
  // The winner rejects some posts, so fallbacks happen around the crash too.
  first->set_reject_rate(0.2);
  // Surface B's async campaign: its leads are answered from the event loop once the queue's
  // writer made them durable, a different path from Surface A's.
  auto seller = client(dir, svc.port)
                    ->Post("/v1/sellers", auth, json{{"name", "Acme"}}.dump(), "application/json");
  ASSERT_TRUE(seller && seller->status == 201);
  json campaign = {{"seller_id", json::parse(seller->body)["data"]["seller_id"]},
                   {"name", "async"},
                   {"vertical", "auto_insurance"},
                   {"mode", "async"},
                   {"rate_limit_per_minute", 1'000'000},
                   {"payout", {{"model", "revshare"}, {"value", 70}}}};
  auto made =
      client(dir, svc.port)->Post("/v1/campaigns", auth, campaign.dump(), "application/json");
  ASSERT_TRUE(made && made->status == 201) << (made ? made->body : "no answer");
  const std::string campaign_key = json::parse(made->body)["data"]["campaign_key"];
  // The seller's postback endpoint, taking every event of its leads.
  const std::string acme = json::parse(seller->body)["data"]["seller_id"];
  auto endpoint = client(dir, svc.port)
                      ->Post("/v1/postback-endpoints", auth,
                             json{{"seller_id", acme},
                                  {"url", receiver.url("/acme")},
                                  {"events", {"lead.sold", "lead.unsold", "lead.returned"}}}
                                 .dump(),
                             "application/json");
  ASSERT_TRUE(endpoint && endpoint->status == 201) << (endpoint ? endpoint->body : "no answer");
  const json endpoint_made = json::parse(endpoint->body)["data"];
  const std::string endpoint_id = endpoint_made["id"];
  receiver.set("/acme", endpoint_made["secret"], PostbackReceiver::Mode::kOk);
  // The returner has an operator key of its own: the posters use up the bootstrap key's limit.
  auto returns_key =
      client(dir, svc.port)
          ->Post("/v1/api-keys", auth, json{{"name", "returns"}, {"plan", "enterprise"}}.dump(),
                 "application/json");
  ASSERT_TRUE(returns_key && returns_key->status == 201);
  const httplib::Headers returner_auth = {
      {"Authorization",
       "Bearer " + json::parse(returns_key->body)["data"]["key"].get<std::string>()}};

  for (int round = 0; round < 2; ++round) {
    std::mutex mu;
    std::set<std::string> acked;
    std::atomic<int> salt{round * 100'000};
    std::atomic<bool> stop{false};
    std::atomic<int> acked_b{0};
    std::vector<std::thread> posters;
    // The operator returns sold leads while the leads stream in, so the kill may land inside a
    // return too. A 201 is an acknowledged return: it must survive.
    std::set<std::string> returned_acked;
    std::thread returner([&] {
      auto c = client(dir, svc.port);
      while (!stop) {
        // Exclusive sales only: a shared lead is returned share by share (the store tests).
        auto list =
            c->Get("/v1/leads?status=delivered&vertical=auto_insurance&limit=5", returner_auth);
        if (!list || list->status != 200) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          continue;
        }
        const json page = json::parse(list->body);  // kept: the loop below reads into it
        for (const auto& lead : page["data"]) {
          const std::string id = lead["lead_id"];
          auto r = c->Post(("/v1/leads/" + id + "/return").c_str(), returner_auth,
                           json{{"reason", "duplicate"}}.dump(), "application/json");
          if (r && r->status == 201) {
            std::lock_guard lock(mu);
            returned_acked.insert(id);
          }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    for (int t = 0; t < 4; ++t) {
      posters.emplace_back([&, surface_b = t % 2 == 1, shared = t == 2] {
        auto c = client(dir, svc.port);
        while (!stop) {
          json lead = sample_lead(salt++, shared ? "home_insurance" : "auto_insurance");
          if (shared) lead.erase("custom_fields");
          auto r = surface_b
                       ? c->Post("/api/v1/lead", sample_campaign_lead(salt++, campaign_key).dump(),
                                 "application/json")
                       : c->Post("/v1/leads",
                                 {{"Authorization", "Bearer " + key}, {"Prefer", "respond-async"}},
                                 lead.dump(), "application/json");
          if (!r) continue;  // the process is gone: not acknowledged, not counted
          if (r->status == 202) {
            std::lock_guard lock(mu);
            acked.insert(json::parse(r->body)["lead_id"].get<std::string>());
            if (surface_b) ++acked_b;
          }
        }
      });
    }
    // Let a few hundred leads through and the first returns be made, then kill the whole
    // service mid-stream (on a loaded machine the first sales can lag the intake by seconds).
    for (int i = 0; i < 1500; ++i) {
      {
        std::lock_guard lock(mu);
        if (acked.size() >= 150 && !returned_acked.empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    svc.process->kill_hard();
    stop = true;
    for (auto& t : posters) t.join();
    returner.join();
    ASSERT_GE(acked.size(), 50u);
    EXPECT_GT(acked_b.load(), 10) << "too few Surface B leads to prove its path";

    svc = start_service(dir, key);
    auto c = client(dir, svc.port);
    // Every acknowledged lead reaches a final status.
    std::set<std::string> pending = acked;
    for (int i = 0; i < 600 && !pending.empty(); ++i) {
      for (auto it = pending.begin(); it != pending.end();) {
        auto r = c->Get(("/v1/leads/" + *it).c_str(), auth);
        if (r && r->status == 200 && json::parse(r->body)["data"]["status"] != "pending")
          it = pending.erase(it);
        else
          ++it;
      }
      if (!pending.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(pending.empty()) << pending.size() << " of " << acked.size()
                                 << " acknowledged leads never decided";
    std::string error;
    auto store = open_store("sqlite:" + dir.path() + "/leadflow.db", error);
    ASSERT_NE(store, nullptr) << error;
    // Every re-offer runs: one leased by the killed process once its lease ends.
    for (int i = 0; i < 600 && store->count_reoffers(0, false) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(store->count_reoffers(0, false), 0) << "re-offers never ran";

    // No lead went to two buyers: every sale a buyer accepted (repeats of one Idempotency-Key
    // count once) is exactly one delivered or returned lead in the store.
    std::set<std::string> sold;
    int delivered = 0, returned = 0;
    for (const char* status : {"delivered", "returned"}) {
      std::string cursor;
      for (;;) {
        auto r = c->Get(("/v1/leads?status=" + std::string(status) + "&limit=100" +
                         (cursor.empty() ? "" : "&cursor=" + cursor))
                            .c_str(),
                        auth);
        ASSERT_TRUE(r && r->status == 200);
        const json page = json::parse(r->body);
        for (const auto& lead : page["data"]) {
          ++(std::string(status) == "delivered" ? delivered : returned);
          sold.insert(lead["lead_id"].get<std::string>());
          EXPECT_TRUE(lead["distribution"]["buyer_id"].is_string());
        }
        if (!page["has_more"].get<bool>()) break;
        cursor = page["next_cursor"];
      }
    }
    // Every sale the buyers accepted is one sales row of its lead, read straight from the
    // store's file: a shared lead has at most two, of two different buyers.
    std::map<std::string, std::size_t> sales_of;
    std::uint64_t sale_rows = 0;
    int shared_leads = 0;
    for (const auto& id : sold) {
      const auto lead = store->get_lead(id).value;
      ASSERT_TRUE(lead);
      const auto& sales = lead->distribution.sales;
      sales_of[id] = sales.size();
      sale_rows += sales.size();
      const std::size_t allowed = lead->lead.vertical == "home_insurance" ? 2 : 1;
      EXPECT_GE(sales.size(), 1u) << id;
      EXPECT_LE(sales.size(), allowed) << id;
      if (sales.size() == 2) {
        ++shared_leads;
        EXPECT_NE(sales[0].buyer_id, sales[1].buyer_id) << id;
      }
    }
    std::uint64_t accepted = 0;
    for (auto* sim : all_buyers) accepted += sim->stats().accepted;
    EXPECT_EQ(accepted, sale_rows);
    EXPECT_GT(delivered, 0);
    EXPECT_GT(shared_leads, 0) << "no lead was shared";
    EXPECT_GT(aged->stats().accepted, 0u) << "no unsold lead was sold aged";
    EXPECT_GT(returned_acked.size(), 0u) << "no return was made before the kill";
    for (const auto& id : returned_acked) {
      auto r = c->Get(("/v1/leads/" + id).c_str(), auth);
      ASSERT_TRUE(r && r->status == 200);
      EXPECT_EQ(json::parse(r->body)["data"]["status"], "returned") << id << ": return lost";
    }

    // The ledger, read straight from the store's file: one sale entry per sold lead, one return
    // entry per returned one (reversing it exactly), nothing else.
    {
      std::map<std::string, std::pair<int, int>> entries;  // lead: sales, returns
      std::map<std::string, Cents> margin;
      RevenueCell ledger;  // the ledger summed by hand
      LedgerQuery q;
      q.limit = 1000;
      for (;;) {
        const auto page = store->list_ledger(q);
        ASSERT_TRUE(page.has_value());
        if (page->empty()) break;
        for (const auto& e : *page) {
          auto& [s, ret] = entries[e.lead_id];
          ++(e.kind == "sale" ? s : ret);
          margin[e.lead_id] += e.revenue - e.payout;
          if (e.kind == "sale") {
            ++ledger.sales;
            ledger.revenue += e.revenue;
            ledger.payout += e.payout;
          } else {
            ++ledger.returns;
            ledger.returned_revenue -= e.revenue;
            ledger.returned_payout -= e.payout;
          }
        }
        q.after_id = page->back().id;
        q.after_at_ms = page->back().at_ms;
      }
      EXPECT_EQ(entries.size(), sold.size());
      int return_entries = 0;
      for (const auto& [lead_id, counts] : entries) {
        EXPECT_TRUE(sold.count(lead_id)) << lead_id << " has entries but was not sold";
        EXPECT_EQ(counts.first, static_cast<int>(sales_of[lead_id])) << lead_id;
        EXPECT_LE(counts.second, 1) << lead_id;
        if (counts.second == 1) {
          EXPECT_EQ(margin[lead_id], 0) << lead_id;
        }
        return_entries += counts.second;
      }
      EXPECT_EQ(return_entries, returned);

      // The rollups the reports read committed with what they count, through every kill: the
      // revenue rollup holds the ledger, the performance rollup one sold lead per lead the
      // ledger sold.
      RollupQuery all;
      all.to_ms = std::int64_t{1} << 50;
      const auto revenue = store->revenue_rollup(all);
      const auto performance = store->performance_rollup(all);
      ASSERT_TRUE(revenue && revenue->size() == 1u && performance && performance->size() == 1u);
      const RevenueCell& r = revenue->front();
      EXPECT_EQ(r.sales, ledger.sales);
      EXPECT_EQ(r.revenue, ledger.revenue);
      EXPECT_EQ(r.payout, ledger.payout);
      EXPECT_EQ(r.returns, ledger.returns);
      EXPECT_EQ(r.returned_revenue, ledger.returned_revenue);
      EXPECT_EQ(r.returned_payout, ledger.returned_payout);
      EXPECT_EQ(performance->front().figures[kSold], static_cast<std::int64_t>(entries.size()));
    }
    // The outbox: one event per outcome of the seller's leads that reports one, and one per
    // return; none for anything that did not happen. Then every event reaches the endpoint.
    std::size_t outbox_events = 0;
    {
      std::map<std::string, std::map<std::string, int>> events_of;  // lead: kind: rows
      std::set<std::string> event_ids;
      std::string before;
      for (;;) {
        const auto page = store->list_postback_deliveries(endpoint_id, before, 1000);
        ASSERT_TRUE(page.has_value());
        if (page->empty()) break;
        for (const auto& d : *page) {
          ++events_of[d.facts.lead_id][d.facts.kind];
          event_ids.insert(d.facts.event_id);
        }
        before = page->back().facts.event_id;
      }
      outbox_events = event_ids.size();
      std::size_t acme_leads = 0;
      LeadQuery q;
      q.seller_id = acme;
      q.limit = 1000;
      for (;;) {
        const auto page = store->list_leads(q);
        ASSERT_TRUE(page.has_value());
        if (page->empty()) break;
        for (const auto& l : *page) {
          ++acme_leads;
          const DeliveryStatus st = l.distribution.status;
          const bool sold = st == DeliveryStatus::kDelivered || st == DeliveryStatus::kReturned;
          const bool unsold = st == DeliveryStatus::kUnsold || st == DeliveryStatus::kDuplicate ||
                              st == DeliveryStatus::kRejected;
          // Offered again: its live auction ended unsold (reported then), whatever came after.
          // (A page of the list carries no attempts: the lead's own read does.)
          const auto whole = store->get_lead(l.lead.id);
          ASSERT_TRUE(whole.value.has_value()) << l.lead.id;
          const auto& tried = whole.value->distribution.attempts;
          const bool reoffered = std::any_of(tried.begin(), tried.end(),
                                             [](const Attempt& a) { return a.reoffer > 0; });
          auto& kinds = events_of[l.lead.id];
          // One event per sale that reported one: live, once; aged, once per re-offer that sold.
          if (reoffered)
            EXPECT_EQ(kinds["lead.sold"] > 0, sold) << l.lead.id << " " << to_string(st);
          else
            EXPECT_EQ(kinds["lead.sold"], sold ? 1 : 0) << l.lead.id << " " << to_string(st);
          EXPECT_EQ(kinds["lead.unsold"], unsold || reoffered ? 1 : 0)
              << l.lead.id << " " << to_string(st);
          EXPECT_EQ(kinds["lead.returned"], st == DeliveryStatus::kReturned ? 1 : 0) << l.lead.id;
          events_of.erase(l.lead.id);
        }
        q.before_id = page->back().lead.id;
      }
      EXPECT_TRUE(events_of.empty()) << events_of.size() << " leads with events are not Acme's";
      EXPECT_GT(acme_leads, 10u);
      // The events the killed process had claimed wait out their lease (60 s from the claim)
      // before the new process may send them, and a sanitizer build on a loaded machine is slow
      // to get there: 60 s from here was not always enough.
      EXPECT_TRUE(receiver.wait_for(
          [&](const std::vector<PostbackReceiver::Received>& got) {
            std::set<std::string> delivered;
            for (const auto& r : got)
              if (r.answered == 200) delivered.insert(r.event_id);
            return std::includes(delivered.begin(), delivered.end(), event_ids.begin(),
                                 event_ids.end());
          },
          std::chrono::seconds(180)))
          << "not every event of the outbox reached the endpoint";
      for (const auto& r : receiver.received()) EXPECT_TRUE(r.signature_ok) << r.event_id;
    }
    std::cout << "round " << round << ": postback events " << outbox_events << ", acknowledged "
              << acked.size() << " (" << acked_b << " on Surface B)"
              << ", delivered " << delivered << " (" << shared_leads << " shared, "
              << aged->stats().accepted << " aged in all rounds)"
              << ", returned " << returned << " (" << returned_acked.size()
              << " acknowledged before the kill)"
              << ", duplicate posts absorbed by buyers " <<
        [&] {
          std::uint64_t n = 0;
          for (auto* sim : all_buyers) n += sim->stats().duplicate_posts;
          return n;
        }() << "\n";
  }
  EXPECT_EQ(svc.process->terminate(std::chrono::seconds(20)), 0);  // SIGTERM: clean exit
}

}  // namespace
}  // namespace leadflow::testing
