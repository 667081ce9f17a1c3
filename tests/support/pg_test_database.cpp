#include "pg_test_database.hpp"

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "leadflow/base/ids.hpp"

namespace leadflow::testing {

std::string pg_admin_url() {
  if (const char* v = std::getenv("LEADFLOW_TEST_PG_URL"); v && *v) return v;
  std::ifstream in(std::string(LEADFLOW_BINARY_DIR) + "/pg/url");
  std::string url;
  std::getline(in, url);
  return url;
}

bool psql(const std::string& url, const std::string& sql) {
  const std::string cmd =
      "psql -q -v ON_ERROR_STOP=1 '" + url + "' -c \"" + sql + "\" >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

std::string pg_url_of(const std::string& admin_url, const std::string& database,
                      const std::string& params) {
  const auto slash = admin_url.rfind('/');
  return (slash == std::string::npos ? admin_url + "/" : admin_url.substr(0, slash + 1)) +
         database + params;
}

PgTestDatabase::PgTestDatabase(const std::string& prefix) : admin_(pg_admin_url()) {
  if (admin_.empty()) return;
  name_ = prefix + new_id("t").substr(2);
  for (auto& ch : name_) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  made_ = psql(admin_, "CREATE DATABASE " + name_);
}

PgTestDatabase::~PgTestDatabase() {
  if (made_) psql(admin_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
}

}  // namespace leadflow::testing
