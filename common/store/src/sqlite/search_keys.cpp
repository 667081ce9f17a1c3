// Migration 18 of the SQLite store: the search keys of the leads already held.
#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "sqlite/schema.hpp"

namespace leadflow::sqlite {

int backfill_search_keys(Connection& c) {
  {
    Query any(c, "SELECT 1 FROM leads LIMIT 1");
    const int rc = any.step();
    if (rc == SQLITE_DONE) return SQLITE_OK;  // nothing to fill: no secret made before its time
    if (rc != SQLITE_ROW) return rc;
  }
  std::string secret;
  {
    const std::string candidate = new_installation_secret();
    Query put(c, "INSERT INTO shared_secrets (name, value) VALUES (?1, ?2) ON CONFLICT DO NOTHING");
    if (int rc = put.bind(kInstallationSecretName).bind(candidate).run()) return rc;
    Query get(c, "SELECT value FROM shared_secrets WHERE name = ?1");
    const int rc = get.bind(kInstallationSecretName).step();
    if (rc != SQLITE_ROW) return rc == SQLITE_DONE ? SQLITE_ERROR : rc;
    secret = get.text(0);
  }
  // Pages in id order, each written before the next is read: memory stays bounded by a page.
  constexpr int kPage = 5000;
  struct Row {
    std::string id, email_key, phone_key;
  };
  std::string after;
  std::int64_t leads = 0;
  for (;;) {
    std::vector<Row> page;
    {
      Query q(c, "SELECT id, email, phone FROM leads WHERE id > ?1 ORDER BY id LIMIT 5000");
      q.bind(after);
      int rc;
      while ((rc = q.step()) == SQLITE_ROW)
        page.push_back({q.text(0), search_key(secret, SearchField::kEmail, q.text(1)),
                        search_key(secret, SearchField::kPhone, q.text(2))});
      if (rc != SQLITE_DONE) return rc;
    }
    for (const Row& r : page) {
      Query u(c, "UPDATE leads SET email_key = ?2, phone_key = ?3 WHERE id = ?1");
      if (int rc = u.bind(r.id).bind_or_null(r.email_key).bind_or_null(r.phone_key).run())
        return rc;
    }
    leads += static_cast<std::int64_t>(page.size());
    if (page.size() < static_cast<std::size_t>(kPage)) break;
    after = page.back().id;
    if (leads % 100'000 == 0) log(LogLevel::kInfo, "store_backfill_search", {{"leads", leads}});
  }
  return SQLITE_OK;
}

}  // namespace leadflow::sqlite
