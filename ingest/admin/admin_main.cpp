// leadflow-admin: operator tasks straight on the store named by LEADFLOW_STORE — migrations,
// sellers, campaigns, API keys, buyer import. Prints JSON; secrets are shown once, here.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "generate.hpp"
#include "leadflow/base/audit.hpp"
#include "leadflow/base/clock.hpp"
#include "leadflow/base/config.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/compression/gzip_inflater.hpp"
#include "leadflow/domain/accounts.hpp"
#include "leadflow/domain/buyer.hpp"
#include "leadflow/domain/verticals.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/management/suppression_lists.hpp"
#include "leadflow/store/store.hpp"

namespace {

using nlohmann::json;

constexpr const char* kUsage = R"(usage: leadflow-admin COMMAND [--flag value ...]

  migrate                                   apply pending store migrations
  create-seller   --name N [--payout-model revshare|fixed] [--payout-value X]
                  [--time-zone IANA_ZONE]
  create-campaign --seller-id ID --name N --vertical V [--mode sync|async]
                  [--sync-timeout-ms MS] [--rate-limit-per-minute N]
                  [--payout-model revshare|fixed] [--payout-value X]
  create-api-key  [--seller-id ID | --buyer-id ID] [--name N] [--plan standard|enterprise]
                  [--scopes a,b,...]
  list-api-keys
  revoke-api-key  --id KEY_ID
  list-sellers
  list-campaigns  [--seller-id ID]
  import-buyers   --file buyers.json        (a JSON array of buyer configurations)
  list-buyers
  create-user     --email E --name N (--password-stdin | --password-file PATH)
                  --account operator|seller|buyer [--seller-id ID | --buyer-id ID]
                  a dashboard user; the password is the first line of stdin or of the file
                  (never a flag: flags show in the process list and the shell's history)
  list-users
  create-suppression-list --name N [--buyer-id ID]
                  a suppression list: the operator's (a lead on it is refused at intake) or, with
                  --buyer-id, one buyer's (a lead on it is never offered to that buyer)
  import-suppression-list --list-id ID --file PATH
                  replaces the list's entries with those of the file: one e-mail, phone or
                  SHA-256 a line (or the first cell of a CSV line); only fingerprints are kept.
                  The file may be gzip (told by its first two bytes, whatever its name), read
                  as it is inflated and held, as an upload is, to 1 GiB inflated; a gzip that
                  inflates past it, is damaged or is cut short is refused, nothing replaced
  list-suppression-lists [--buyer-id ID]
  delete-suppression-list --list-id ID
  generate        --leads N --days D [--seed S] [--sellers K] [--buyers B] [--end RFC3339|ms]
                  [--batch N] [--duplicate-rate R] [--return-rate R] [--invalid-rate R]
                  realistic leads, auctions, sales and returns over the D days before --end
                  (default now), written in bulk into a store without leads (benchmarks)

The store is LEADFLOW_STORE (default sqlite:leadflow-data/leadflow.db).
)";

int fail(const std::string& message) {
  std::fprintf(stderr, "leadflow-admin: %s\n", message.c_str());
  return 2;
}

void print(const json& j) { std::printf("%s\n", j.dump(2).c_str()); }

// Keys made and revoked here are audited like those of the API (surface "admin"); the secret
// goes to stdout only.
void audit_key(leadflow::AuditEvent event, std::string_view kind, const json& record) {
  auto member = [&](const char* name) {
    const auto it = record.find(name);
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string key_id = member("key_id"), campaign_id = member("campaign_id"),
                    seller_id = member("seller_id");
  leadflow::AuditRecord r;
  r.event = event;
  r.surface = "admin";
  r.kind = kind;
  r.key_id = key_id;
  r.campaign_id = campaign_id;
  r.seller_id = seller_id;
  leadflow::audit(r);
}

int report(const leadflow::Management::Created& c) {
  if (!c.errors.empty()) {
    json errors = json::array();
    for (const auto& e : c.errors)
      errors.push_back({{"field", e.field}, {"code", e.code}, {"message", e.message}});
    std::fprintf(stderr, "%s\n", json{{"errors", errors}}.dump(2).c_str());
    return 1;
  }
  if (c.status != leadflow::StoreStatus::kOk) return fail("the store refused the record");
  print(c.body);
  return 0;
}

// Reads the file `name` opened as `in` into `upload` as it comes, 1 MiB at a time, never whole:
// clear, or gzip (its first two bytes say so, whatever its name) inflated as it comes and held,
// as an upload sent gzip is (docs/suppression.md), to kMaxSuppressionUploadBytes inflated. A gzip
// that passes it is refused once it does, the rest unread. "" when the whole file was read;
// otherwise why not, and nothing is to be replaced.
std::string read_entries_file(std::istream& in, const std::string& name, bool& gzipped,
                              leadflow::SuppressionUpload& upload) {
  std::string piece(1 << 20, '\0');
  const auto next = [&] {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    return static_cast<std::size_t>(in.gcount());
  };
  std::size_t got = next();
  std::optional<leadflow::GzipInflater> gzip;
  gzipped = leadflow::starts_gzip(std::string_view(piece.data(), got));
  if (gzipped) gzip.emplace(leadflow::kMaxSuppressionUploadBytes, "file");
  const auto entries = [&upload](std::string_view text) { upload.add(text); };
  using Status = leadflow::GzipInflater::Status;
  for (; got > 0; got = next()) {
    const std::string_view bytes(piece.data(), got);
    if (!gzip)
      upload.add(bytes);
    else if (gzip->add(bytes, entries) != Status::kOk)
      break;
  }
  if (in.bad()) return "cannot read --file " + name + "; nothing was replaced";
  if (gzip) {
    const Status s = gzip->finish();
    if (s == Status::kTooLarge)
      return "--file " + name + ": the gzip file inflates past 1 GiB (" +
             std::to_string(leadflow::kMaxSuppressionUploadBytes) +
             " bytes), the limit of an import as of an upload; nothing was replaced";
    if (s != Status::kOk)
      return "--file " + name + ": " + gzip->detail() + "; nothing was replaced";
  }
  upload.finish();
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  std::map<std::string, std::string> flags;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--password-stdin") {  // the one flag without a value
      flags["password-stdin"] = "1";
      continue;
    }
    if (a.rfind("--", 0) != 0 || i + 1 >= argc) return fail("expected --flag value, got " + a);
    // An empty value is a mistake (an unset shell variable), never a choice: an API key made
    // with an empty --seller-id or --buyer-id would be the operator's, with every scope.
    if (argv[i + 1][0] == '\0') return fail("empty value for " + a);
    flags[a.substr(2)] = argv[++i];
  }
  auto flag = [&](const char* name) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string() : it->second;
  };

  std::string error;
  auto config = leadflow::load_config_from_environment(error);
  if (!config) return fail(error);
  auto store = leadflow::open_migrated_store(config->store_url, error);
  if (!store) return fail(error);
  const auto verticals = leadflow::VerticalRegistry::defaults();
  leadflow::Management management(*store, verticals, leadflow::SystemClock::instance(), *store);
  // Changes made here are in the change log as leadflow-admin's, on surface "admin".
  const leadflow::ChangeActor by{"leadflow-admin", "leadflow-admin", "admin"};

  if (command == "migrate") {
    print({{"migrated", true}});
    return 0;
  }
  // --payout-model and --payout-value, into body["payout"] when either is given.
  const auto take_payout = [&](json& body) {
    if (!flag("payout-model").empty() || !flag("payout-value").empty())
      body["payout"] = {
          {"model", flag("payout-model").empty() ? "revshare" : flag("payout-model")},
          {"value", std::stod(flag("payout-value").empty() ? "70" : flag("payout-value"))}};
  };
  if (command == "create-seller") {
    json body = {{"name", flag("name")}};
    if (!flag("time-zone").empty()) body["time_zone"] = flag("time-zone");
    try {
      take_payout(body);
    } catch (const std::exception&) {
      return fail("numeric flags take numbers");
    }
    return report(management.create_seller(body, by));
  }
  if (command == "create-campaign") {
    json body = {
        {"seller_id", flag("seller-id")}, {"name", flag("name")}, {"vertical", flag("vertical")}};
    if (!flag("mode").empty()) body["mode"] = flag("mode");
    try {
      if (!flag("sync-timeout-ms").empty())
        body["sync_timeout_ms"] = std::stoi(flag("sync-timeout-ms"));
      if (!flag("rate-limit-per-minute").empty())
        body["rate_limit_per_minute"] = std::stoi(flag("rate-limit-per-minute"));
      take_payout(body);
    } catch (const std::exception&) {
      return fail("numeric flags take numbers");
    }
    const auto made = management.create_campaign(body, by);
    const int status = report(made);
    if (status == 0) audit_key(leadflow::AuditEvent::kKeyCreated, "campaign_key", made.body);
    return status;
  }
  if (command == "create-api-key") {
    json body = json::object();
    if (!flag("seller-id").empty()) body["seller_id"] = flag("seller-id");
    if (!flag("buyer-id").empty()) body["buyer_id"] = flag("buyer-id");
    if (!flag("name").empty()) body["name"] = flag("name");
    if (!flag("plan").empty()) body["plan"] = flag("plan");
    if (!flag("scopes").empty()) {
      json scopes = json::array();
      std::stringstream ss(flag("scopes"));
      for (std::string s; std::getline(ss, s, ',');) scopes.push_back(s);
      body["scopes"] = scopes;
    }
    const auto made = management.create_api_key(body, by);
    const int status = report(made);
    if (status == 0) audit_key(leadflow::AuditEvent::kKeyCreated, "api_key", made.body);
    return status;
  }
  if (command == "list-api-keys") {
    const auto rows = store->list_api_keys();
    if (!rows) return fail("the store could not be read");
    json out = json::array();
    for (const auto& k : *rows) out.push_back(leadflow::api_key_to_json(k));
    print(out);
    return 0;
  }
  if (command == "revoke-api-key") {
    if (store->revoke_api_key(flag("id"), leadflow::SystemClock::instance().now_ms(),
                              leadflow::kAnyVersion) != leadflow::StoreStatus::kOk)
      return fail("no such key: " + flag("id"));
    audit_key(leadflow::AuditEvent::kKeyRevoked, "api_key", {{"key_id", flag("id")}});
    print({{"key_id", flag("id")}, {"revoked", true}});
    return 0;
  }
  if (command == "list-sellers") {
    const auto rows = store->list_sellers();
    if (!rows) return fail("the store could not be read");
    json out = json::array();
    for (const auto& s : *rows) out.push_back(leadflow::seller_to_json(s));
    print(out);
    return 0;
  }
  if (command == "list-campaigns") {
    const auto rows = store->list_campaigns(flag("seller-id"));
    if (!rows) return fail("the store could not be read");
    json out = json::array();
    for (const auto& c : *rows) out.push_back(leadflow::campaign_to_json(c));
    print(out);
    return 0;
  }
  if (command == "import-buyers") {
    std::ifstream in(flag("file"));
    std::stringstream text;
    text << in.rdbuf();
    const json doc = json::parse(text.str(), nullptr, false);
    if (!in || !doc.is_array()) return fail("--file must name a JSON array of buyers");
    json out = json::array();
    for (std::size_t i = 0; i < doc.size(); ++i) {
      leadflow::FieldErrors errors;
      leadflow::Buyer b =
          leadflow::buyer_from_json(doc[i], nullptr, config->allow_private_buyers, errors);
      for (std::size_t v = 0; v < b.verticals.size(); ++v)
        if (!verticals.find(b.verticals[v]))
          errors.push_back(
              {"verticals[" + std::to_string(v) + "]", "not_allowed", "unknown vertical"});
      if (!errors.empty()) {
        for (const auto& e : errors)
          std::fprintf(stderr, "buyer %zu: %s: %s\n", i, e.field.c_str(), e.message.c_str());
        return 1;
      }
      b.created_at_ms = b.updated_at_ms = leadflow::SystemClock::instance().now_ms();
      b.id = leadflow::new_id(leadflow::kBuyerPrefix, b.created_at_ms);
      if (store->insert_buyer(b) != leadflow::StoreStatus::kOk)
        return fail("the store refused buyer " + std::to_string(i));
      out.push_back(leadflow::buyer_to_json(b, true));
    }
    print(out);
    return 0;
  }
  if (command == "create-user") {
    if (flag("password-stdin").empty() == flag("password-file").empty())
      return fail("create-user takes exactly one of --password-stdin and --password-file");
    std::string password;
    if (!flag("password-file").empty()) {
      std::ifstream in(flag("password-file"));
      if (!in) return fail("cannot read --password-file " + flag("password-file"));
      std::getline(in, password);
    } else {
      std::getline(std::cin, password);
    }
    if (!password.empty() && password.back() == '\r') password.pop_back();
    json body = {{"email", flag("email")},
                 {"name", flag("name")},
                 {"password", password},
                 {"account", flag("account")}};
    if (!flag("seller-id").empty()) body["seller_id"] = flag("seller-id");
    if (!flag("buyer-id").empty()) body["buyer_id"] = flag("buyer-id");
    return report(management.create_user(body, by));
  }
  if (command == "list-users") {
    const auto rows = store->list_users();
    if (!rows) return fail("the store could not be read");
    json out = json::array();
    for (const auto& u : *rows) out.push_back(leadflow::user_to_json(u));
    print(out);
    return 0;
  }
  if (command == "generate") return run_generate(*store, flags);
  if (command == "create-suppression-list") {
    json body = {{"name", flag("name")}};
    if (!flag("buyer-id").empty()) body["buyer_id"] = flag("buyer-id");
    leadflow::NewSuppressionList made = leadflow::suppression_list_from_json(
        body, *store, leadflow::SystemClock::instance().now_ms());
    if (made.status != leadflow::StoreStatus::kOk)
      return fail("the store could not read the buyer");
    if (!made.errors.empty()) {
      for (const auto& e : made.errors)
        std::fprintf(stderr, "%s: %s\n", e.field.c_str(), e.message.c_str());
      return 1;
    }
    if (store->create_suppression_list(made.list) != leadflow::StoreStatus::kOk)
      return fail("the store refused the list");
    leadflow::note_suppression_list_change(*store, leadflow::SystemClock::instance(), by, "created",
                                           nullptr, &made.list);
    print(leadflow::suppression_list_to_json(made.list));
    return 0;
  }
  if (command == "import-suppression-list") {
    const auto list = store->get_suppression_list(flag("list-id"));
    if (list.status == leadflow::StoreStatus::kNotFound)
      return fail("no such list " + flag("list-id"));
    if (!list.value) return fail("the store could not read the list");
    std::ifstream in(flag("file"), std::ios::binary);
    if (!in) return fail("cannot read --file " + flag("file"));
    const auto started = std::chrono::steady_clock::now();
    leadflow::SuppressionUpload upload;
    bool gzipped = false;
    const std::string unread = read_entries_file(in, flag("file"), gzipped, upload);
    if (!unread.empty()) return fail(unread);
    if (upload.too_many())
      return fail("more than " + std::to_string(leadflow::kMaxSuppressionEntries) +
                  " entries: a list holds at most that many");
    const std::size_t read = upload.entries_read(), rejected = upload.rejected();
    const std::vector<std::size_t> rejected_lines = upload.rejected_lines();
    const auto fingerprints = upload.take_sorted();
    if (store->replace_suppression_entries(list.value->id, fingerprints,
                                           leadflow::SystemClock::instance().now_ms()) !=
        leadflow::StoreStatus::kOk)
      return fail("the store could not replace the list's entries");
    const auto now = store->get_suppression_list(list.value->id);
    leadflow::SuppressionList replaced = now.value ? *now.value : *list.value;
    replaced.entries = static_cast<std::int64_t>(fingerprints.size());
    leadflow::note_suppression_list_change(*store, leadflow::SystemClock::instance(), by,
                                           "replaced", &*list.value, &replaced);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    print({{"list_id", list.value->id},
           {"entries", fingerprints.size()},
           {"read", read},
           {"repeats", read - fingerprints.size()},
           {"rejected", rejected},
           {"rejected_lines", rejected_lines},
           {"gzip", gzipped},
           {"seconds", seconds}});
    return 0;
  }
  if (command == "list-suppression-lists") {
    const auto lists = flags.contains("buyer-id") ? store->list_suppression_lists(flag("buyer-id"))
                                                  : store->list_suppression_lists();
    if (!lists) return fail("the store could not list the suppression lists");
    json out = json::array();
    for (const auto& l : *lists) out.push_back(leadflow::suppression_list_to_json(l));
    print(out);
    return 0;
  }
  if (command == "delete-suppression-list") {
    const auto list = store->get_suppression_list(flag("list-id"));
    if (list.status == leadflow::StoreStatus::kNotFound)
      return fail("no such list " + flag("list-id"));
    if (!list.value) return fail("the store could not read the list");
    const auto status = store->delete_suppression_list(flag("list-id"));
    if (status == leadflow::StoreStatus::kNotFound) return fail("no such list " + flag("list-id"));
    if (status != leadflow::StoreStatus::kOk) return fail("the store could not delete the list");
    leadflow::note_suppression_list_change(*store, leadflow::SystemClock::instance(), by, "deleted",
                                           &*list.value, nullptr);
    print({{"list_id", flag("list-id")}, {"deleted", true}});
    return 0;
  }
  if (command == "list-buyers") {
    json out = json::array();
    leadflow::BuyerQuery q;
    q.limit = 1000;
    const auto buyers = store->list_buyers(q);
    if (!buyers) return fail("the store could not list the buyers");
    for (const auto& b : *buyers) out.push_back(leadflow::buyer_to_json(b, true));
    print(out);
    return 0;
  }
  std::fputs(kUsage, stderr);
  return fail("unknown command " + command);
}
