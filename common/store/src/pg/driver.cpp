#include "pg/driver.hpp"

#include <algorithm>
#include <charconv>

#include "leadflow/base/log.hpp"
#include "pg/redact.hpp"

namespace leadflow::pg {

std::string without_nul(std::string_view v) {
  std::string s(v);
  std::erase(s, '\0');
  return s;
}

std::string format_double(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest exact form
  return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

std::unique_ptr<Connection> Connection::open(const ConnectSettings& settings, std::string& error) {
  std::vector<const char*> keywords, values;
  for (const auto& k : settings.keywords) keywords.push_back(k.c_str());
  for (const auto& v : settings.values) values.push_back(v.c_str());
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) {
    error = "out of memory";
    return nullptr;
  }
  std::unique_ptr<Connection> c(new Connection(conn, settings.secrets));
  if (PQstatus(conn) != CONNECTION_OK) {
    error = redact(PQerrorMessage(conn), *settings.secrets);
    return nullptr;
  }
  // NOTICEs ("relation already exists, skipping") would go to stderr, outside the log format.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return c;
}

Result Connection::check(PGresult* r) {
  Result result(r);
  const ExecStatusType status = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
  throw error_of(r);
}

const std::string* Connection::prepare(const char* sql, int params) {
  if (prepare_nothing_) return nullptr;
  if (auto it = prepared_.find(sql); it != prepared_.end()) return &it->second;
  if (prepared_.size() >= kMaxPrepared) return nullptr;
  // A forgotten statement's name is never reused: the server still holds it.
  std::string name = "lf_" + std::to_string(++statements_prepared_);
  check(PQprepare(conn_, name.c_str(), sql, params, nullptr));
  return &prepared_.emplace(sql, std::move(name)).first->second;
}

void Connection::prepared_failed(const char* sql, const PGresult* r) {
  const char* state = r != nullptr ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  if (state == nullptr) return;
  if (std::string_view(state) == "0A000") prepared_.erase(sql);
  if (std::string_view(state) == "26000") {
    prepared_.clear();
    prepare_nothing_ = true;
  }
}

Result Connection::check_prepared(const char* sql, PGresult* r) {
  const ExecStatusType status = r != nullptr ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) prepared_failed(sql, r);
  return check(r);
}

std::vector<Result> Connection::exec_pipeline(const std::vector<Statement>& statements,
                                              Effect effect) {
  // Statements to run prepared are prepared first, each once per connection, outside the
  // pipeline.
  std::vector<const std::string*> names(statements.size(), nullptr);
  for (std::size_t i = 0; i < statements.size(); ++i)
    if (statements[i].prepared) names[i] = prepare(statements[i].sql, statements[i].params.size());
  note_send(effect);
  if (PQenterPipelineMode(conn_) != 1) throw error_of(nullptr);
  // Blocking mode is safe for long pipelines: while libpq waits to send, it reads what the
  // server answers into its own buffer, so neither side stalls on a full socket.
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const Statement& s = statements[i];
    const auto values = s.params.pointers();
    const int sent = names[i] != nullptr
                         ? PQsendQueryPrepared(conn_, names[i]->c_str(), s.params.size(),
                                               values.data(), nullptr, nullptr, /*resultFormat=*/0)
                         : PQsendQueryParams(conn_, s.sql, s.params.size(), nullptr, values.data(),
                                             nullptr, nullptr, /*resultFormat=*/0);
    if (sent != 1) {
      broken_ = true;  // half a pipeline sent: the connection's state is unknown
      throw error_of(nullptr);
    }
  }
  if (PQpipelineSync(conn_) != 1) {
    broken_ = true;
    throw error_of(nullptr);
  }
  // Each statement's result, then a null ending it; then the sync point. After a failure the
  // server skips the rest (PGRES_PIPELINE_ABORTED) up to the sync point.
  std::vector<Result> results;
  results.reserve(statements.size());
  std::optional<PgError> failed;
  for (std::size_t i = 0; i < statements.size(); ++i) {
    Result r(PQgetResult(conn_));
    const ExecStatusType status = r.status();
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      results.push_back(std::move(r));
    } else if (status != PGRES_PIPELINE_ABORTED && !failed) {
      failed = error_of(r.get());
      if (names[i] != nullptr) prepared_failed(statements[i].sql, r.get());
    }
    if (PQstatus(conn_) != CONNECTION_OK) {
      broken_ = true;
      throw failed ? *failed : error_of(nullptr);
    }
    while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);  // the null ending it
  }
  const Result sync(PQgetResult(conn_));
  if (sync.status() != PGRES_PIPELINE_SYNC || PQexitPipelineMode(conn_) != 1) {
    broken_ = true;
    throw failed ? *failed : error_of(sync.get());
  }
  if (failed) throw *failed;
  return results;
}

std::vector<std::string> Connection::take_notifications() {
  if (PQconsumeInput(conn_) == 0 || PQstatus(conn_) != CONNECTION_OK) {
    broken_ = true;
    PgError e = error_of(nullptr);
    e.connection_lost = true;
    throw e;
  }
  std::vector<std::string> payloads;
  while (PGnotify* n = PQnotifies(conn_)) {
    payloads.emplace_back(n->extra != nullptr ? n->extra : "");
    PQfreemem(n);
  }
  return payloads;
}

PgError Connection::error_of(const PGresult* r) {
  PgError e;
  if (r != nullptr) {
    if (const char* s = PQresultErrorField(r, PG_DIAG_SQLSTATE)) e.sqlstate = s;
    if (const char* m = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)) e.message = m;
  }
  if (e.message.empty()) e.message = PQerrorMessage(conn_);
  e.message = redact(std::move(e.message), *secrets_);
  // 08: connection exceptions; 57P01-57P03: the server is shutting down or restarting.
  e.connection_lost = PQstatus(conn_) != CONNECTION_OK || e.sqlstate.starts_with("08") ||
                      e.sqlstate == "57P01" || e.sqlstate == "57P02" || e.sqlstate == "57P03";
  if (e.connection_lost) broken_ = true;
  return e;
}

ConnectionPool::Lease ConnectionPool::acquire() {
  std::unique_ptr<Connection> stale;
  std::uint64_t generation = 0;
  {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, kAcquireTimeout, [&] { return !free_.empty() || opened_ < size_; })) {
      log(LogLevel::kError, "store_unavailable",
          {{"op", "acquire"}, {"detail", "every connection stayed busy"}});
      return {};
    }
    if (!free_.empty()) {
      auto conn = std::move(free_.back());
      free_.pop_back();
      if (conn->generation() == generation_ && conn->alive()) return Lease(this, std::move(conn));
      stale = std::move(conn);  // its slot is reused for a new connection below
    } else {
      ++opened_;
    }
    generation = generation_;
  }
  stale.reset();  // PQfinish outside the lock
  std::string error;
  auto conn = Connection::open(settings_, error);
  if (!conn) {
    {
      std::lock_guard lock(mu_);
      --opened_;
    }
    cv_.notify_one();
    // Logged once per outage, not once per call while the server is down.
    if (!down_.exchange(true))
      log(LogLevel::kError, "store_unavailable", {{"op", "connect"}, {"detail", error}});
    return {};
  }
  if (down_.exchange(false)) log(LogLevel::kInfo, "store_reconnected", {});
  conn->set_generation(generation);
  return Lease(this, std::move(conn));
}

void ConnectionPool::give_back(std::unique_ptr<Connection> conn) {
  const bool healthy = conn->reset_transaction();
  std::vector<std::unique_ptr<Connection>> retired;  // closed outside the lock
  {
    std::lock_guard lock(mu_);
    if (!healthy && conn->generation() == generation_) {
      ++generation_;
      retired = std::move(free_);
      free_.clear();
      opened_ -= retired.size();
    }
    if (healthy && conn->generation() == generation_) {
      free_.push_back(std::move(conn));
    } else {
      retired.push_back(std::move(conn));
      --opened_;
    }
  }
  cv_.notify_all();
}

}  // namespace leadflow::pg
