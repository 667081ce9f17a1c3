// Migration 18 of the PostgreSQL store: the search keys of the leads already held.
#include "leadflow/base/log.hpp"
#include "leadflow/domain/lead_search.hpp"
#include "pg/schema.hpp"

namespace leadflow::pg {

void backfill_search_keys(Connection& c) {
  if (c.exec("SELECT 1 FROM leads LIMIT 1", Effect::kRead).rows() == 0) return;
  c.exec("INSERT INTO shared_secrets (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING",
         Params().add(kInstallationSecretName).add(new_installation_secret()), Effect::kWrite);
  const std::string secret = c.exec("SELECT value FROM shared_secrets WHERE name = $1",
                                    Params().add(kInstallationSecretName), Effect::kRead)
                                 .text(0, 0);
  // Pages in id order, each written in one statement before the next is read.
  constexpr int kPage = 5000;
  std::string after;
  std::int64_t leads = 0;
  for (;;) {
    const Result page =
        c.exec("SELECT id, email, phone FROM leads WHERE id > $1 ORDER BY id LIMIT 5000",
               Params().add(after), Effect::kRead);
    ArrayText ids, emails, phones;
    for (int i = 0; i < page.rows(); ++i) {
      ids.add(page.text(i, 0));
      emails.add(search_key(secret, SearchField::kEmail, page.text(i, 1)));
      phones.add(search_key(secret, SearchField::kPhone, page.text(i, 2)));
    }
    if (page.rows() > 0) {
      c.exec(
          "UPDATE leads SET email_key = NULLIF(k.email_key, ''), phone_key = NULLIF(k.phone_key, "
          "'')"
          " FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[]) AS k (id, email_key, phone_key)"
          " WHERE leads.id = k.id",
          Params().add(ids.str()).add(emails.str()).add(phones.str()), Effect::kWrite);
      after = page.text(page.rows() - 1, 0);
    }
    leads += page.rows();
    if (page.rows() < kPage) break;
    if (leads % 100'000 == 0) log(LogLevel::kInfo, "store_backfill_search", {{"leads", leads}});
  }
}

}  // namespace leadflow::pg
