// The PostgreSQL adapter of the announcements port (leadflow/store/announcements.hpp): NOTIFY and
// LISTEN between processes.
#include "pg/adapter.hpp"

namespace leadflow::pg {

bool PgStore::announces() const { return true; }

/// One statement: each payload becomes a NOTIFY, sent when the statement's own transaction
/// commits. A payload must stay under 8,000 bytes (PostgreSQL's limit).
StoreStatus PgStore::announce(std::string_view channel, std::span<const std::string> payloads) {
  if (!valid_channel(channel)) return StoreStatus::kUnavailable;
  if (payloads.empty()) return StoreStatus::kOk;
  ArrayText all;
  for (const std::string& p : payloads) all.add(p);
  return run("announce", StoreStatus::kUnavailable, [&](Connection& c) {
    c.exec("SELECT pg_notify($1, p) FROM unnest($2::TEXT[]) AS p",
           Params().add(channel).add(all.str()), Effect::kWrite);
    return StoreStatus::kOk;
  });
}

std::unique_ptr<StoreWatch> PgStore::watch(std::string_view channel,
                                           std::function<void(std::string_view)> on_payload,
                                           std::function<void()> on_listening) {
  if (!valid_channel(channel)) return nullptr;
  return std::make_unique<PgWatch>(listen_settings_, std::string(channel), std::move(on_payload),
                                   std::move(on_listening));
}

}  // namespace leadflow::pg
