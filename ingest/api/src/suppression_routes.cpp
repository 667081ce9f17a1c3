// The suppression list routes: the handlers decode, ask the visibility model whose list the
// reader may touch, call the store's port and encode; the reading of an upload is management's
// (SuppressionUpload, the same as leadflow-admin's import), the lookups' rules are
// common/suppression's.
#include "suppression_routes.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/http/gzip.hpp"
#include "leadflow/management/suppression_lists.hpp"
#include "leadflow/visibility/suppression.hpp"
#include "pages.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json list_view(const SuppressionList& l) { return suppression_list_to_json(l); }

// The list `id` if the reader may touch it; otherwise the refusal is sent (404 for a list that
// is not the reader's, as for none: a buyer does not learn another's lists exist).
std::optional<SuppressionList> readable_list(const SuppressionPorts& ports, const Viewer& viewer,
                                             std::string_view id, StoreStep step,
                                             http::Response& res) {
  Lookup<SuppressionList> found = ports.lists.get_suppression_list(id);
  if (found.status == StoreStatus::kUnavailable) {
    send_problem(res, refusal_for(found.status, step));
    return std::nullopt;
  }
  if (!found.value || !may_manage_suppression_list(viewer, found.value->buyer_id)) {
    send_problem(res, refusal_for(SuppressionRefused::kNoSuchList));
    return std::nullopt;
  }
  return std::move(found.value);
}

bool is_text_upload(const http::Request& req) {
  const std::string type = http::media_type(req);
  return type == "text/csv" || type == "text/plain";
}

// Reads the body into `upload` as it arrives: a large one piece by piece from the connection
// (Routes::put_streamed), so only its fingerprints are held; a gzip one inflated as it comes,
// held to the clear body's limit inflated. false: nothing is to be replaced, and the answer is
// given: by the server for a body that will never be whole (the client went away, stalled or
// framed it badly), here for a gzip that is damaged or inflates too far.
bool read_upload(const http::Request& req, SuppressionUpload& upload, http::Response& res) {
  const http::BodyRead body = http::read_body(
      req, kMaxSuppressionUploadBytes, [&upload](std::string_view piece) { upload.add(piece); });
  switch (body.outcome) {
    case http::BodyRead::Outcome::kWhole:
      return true;
    case http::BodyRead::Outcome::kFailed:
      return false;
    case http::BodyRead::Outcome::kTooLarge:
      send_problem(res, refusal_for(SuppressionRefused::kInflatesTooFar));
      return false;
    case http::BodyRead::Outcome::kCorrupt: {
      Refusal r = refusal_for(SuppressionRefused::kBadGzip);
      r.detail = body.detail + "; nothing was replaced";
      send_problem(res, r);
      return false;
    }
  }
  return false;
}

}  // namespace

void answer_suppression_lists(const SuppressionPorts& ports, const Viewer& viewer,
                              const http::Request& req, http::Response& res) {
  FieldErrors errors;
  unknown_params(req, {"buyer_id"}, errors);
  if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
  std::optional<std::string> owner;  // "" = the operator's
  if (viewer.is_buyer()) {
    owner = viewer.buyer_id;
  } else if (req.has_param("buyer_id")) {
    const std::string asked = req.param("buyer_id");
    owner = asked == "operator" ? std::string() : asked;
  }
  const auto lists = owner ? ports.lists.list_suppression_lists(std::string_view(*owner))
                           : ports.lists.list_suppression_lists();
  if (!lists) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
  json data = json::array();
  for (const SuppressionList& l : *lists)
    if (may_manage_suppression_list(viewer, l.buyer_id)) data.push_back(list_view(l));
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

void answer_suppression_list_create(const SuppressionPorts& ports, const Viewer& viewer,
                                    const ChangeActor& by, const http::Request& req,
                                    http::Response& res) {
  if (!http::require_json(req, res)) return;
  auto body = http::parse_body(req, res);
  if (!body) return;
  if (viewer.is_buyer()) {
    // A buyer's list is its own: naming itself is allowed, anyone else is not.
    const auto named = body->find("buyer_id");
    if (named != body->end() && !(named->is_string() && *named == viewer.buyer_id))
      return send_problem(res, refusal_for(SuppressionRefused::kOtherBuyer));
    (*body)["buyer_id"] = viewer.buyer_id;
  }
  NewSuppressionList made = suppression_list_from_json(*body, ports.accounts, ports.clock.now_ms());
  if (made.status != StoreStatus::kOk)
    return send_problem(res, refusal_for(made.status, StoreStep::kWrite));
  if (!made.errors.empty())
    return http::send_problem(res, 400, "the suppression list is invalid", made.errors);
  if (const StoreStatus s = ports.lists.create_suppression_list(made.list); s != StoreStatus::kOk)
    return send_problem(res, refusal_for(s, StoreStep::kWrite));
  log(LogLevel::kInfo, "suppression_list_created",
      {{"list_id", made.list.id}, {"buyer_id", made.list.buyer_id}});
  note_suppression_list_change(ports.changes, ports.clock, by, "created", nullptr, &made.list);
  res.set_header("Location", "/v1/suppression-lists/" + made.list.id);
  http::send_json(res, 201, {{"success", true}, {"data", list_view(made.list)}});
}

void answer_suppression_list(const SuppressionPorts& ports, const Viewer& viewer,
                             std::string_view id, http::Response& res) {
  if (auto l = readable_list(ports, viewer, id, StoreStep::kRead, res))
    http::send_json(res, 200, {{"success", true}, {"data", list_view(*l)}});
}

void answer_suppression_upload(const SuppressionPorts& ports, const Viewer& viewer,
                               const ChangeActor& by, std::string_view id, const http::Request& req,
                               http::Response& res) {
  const auto list = readable_list(ports, viewer, id, StoreStep::kWrite, res);
  if (!list) return;
  if (!is_text_upload(req)) return send_problem(res, refusal_for(SuppressionRefused::kNotText));
  if (http::content_coding(req) == http::ContentCoding::kUnsupported)
    return send_problem(res, refusal_for(SuppressionRefused::kNotGzip));
  const auto started = std::chrono::steady_clock::now();
  SuppressionUpload upload;
  if (!read_upload(req, upload, res)) return;
  upload.finish();
  if (upload.rejected() > 0) {
    Refusal r = refusal_for(SuppressionRefused::kBadLines);
    std::string lines;
    for (const std::size_t n : upload.rejected_lines())
      lines += (lines.empty() ? "" : ", ") + std::to_string(n);
    const bool several = upload.rejected() > 1;
    r.detail = std::string(several ? "lines " : "line ") + lines +
               (upload.rejected() > upload.rejected_lines().size() ? " and more" : "") +
               (several ? " hold" : " holds") +
               " no e-mail, phone or SHA-256; nothing was replaced";
    return send_problem(
        res, r, {{"rejected", upload.rejected()}, {"rejected_lines", upload.rejected_lines()}});
  }
  if (upload.too_many()) return send_problem(res, refusal_for(SuppressionRefused::kTooManyEntries));
  const std::size_t read = upload.entries_read();
  const std::vector<SuppressionFingerprint> fingerprints = upload.take_sorted();
  const StoreStatus s =
      ports.lists.replace_suppression_entries(list->id, fingerprints, ports.clock.now_ms());
  if (s == StoreStatus::kNotFound)
    return send_problem(res, refusal_for(SuppressionRefused::kNoSuchList));
  if (s != StoreStatus::kOk) return send_problem(res, refusal_for(s, StoreStep::kWrite));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log(LogLevel::kInfo, "suppression_list_replaced",
      {{"list_id", list->id},
       {"entries", std::to_string(fingerprints.size())},
       {"seconds", std::to_string(seconds)}});
  const Lookup<SuppressionList> now = ports.lists.get_suppression_list(list->id);
  SuppressionList replaced = *list;  // as it now is, should the store not say
  replaced.entries = static_cast<std::int64_t>(fingerprints.size());
  replaced.entries_version = list->entries_version + 1;
  replaced.updated_at_ms = ports.clock.now_ms();
  if (now.value) replaced = *now.value;
  note_suppression_list_change(ports.changes, ports.clock, by, "replaced", &*list, &replaced);
  json data = list_view(replaced);
  data["upload"] = {{"read", read}, {"repeats", read - fingerprints.size()}};
  http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
}

void answer_suppression_list_delete(const SuppressionPorts& ports, const Viewer& viewer,
                                    const ChangeActor& by, std::string_view id,
                                    http::Response& res) {
  const auto list = readable_list(ports, viewer, id, StoreStep::kWrite, res);
  if (!list) return;
  const StoreStatus s = ports.lists.delete_suppression_list(list->id);
  if (s == StoreStatus::kNotFound)
    return send_problem(res, refusal_for(SuppressionRefused::kNoSuchList));
  if (s != StoreStatus::kOk) return send_problem(res, refusal_for(s, StoreStep::kWrite));
  log(LogLevel::kInfo, "suppression_list_deleted", {{"list_id", list->id}});
  note_suppression_list_change(ports.changes, ports.clock, by, "deleted", &*list, nullptr);
  res.status = 204;
}

void register_suppression_lists(Routes& routes, IngestContext& c) {
  const auto ports = [&c] {
    return SuppressionPorts{*c.suppression_store, c.accounts, c.changes, c.clock};
  };
  // Reading takes either buyer scope (a buyer's key holds buyers:write only); a seller's key and
  // user hold neither, and are refused before any list is looked at.
  const auto read_scope = static_cast<Scope>(kScopeBuyersRead | kScopeBuyersWrite);
  // The reader, and who it is in the change log (a buyer's key or user acts for the buyer).
  struct Reader {
    Viewer viewer;
    ChangeActor by;
  };
  const auto reader = [&c](const http::Request& q, http::Response& r, Scope scope) {
    std::optional<Reader> v;
    if (const auto key = authorise(c, q, r, scope)) {
      v = Reader{Viewer::of(*key), key->buyer_id.empty() ? actor_of(*key) : buyer_actor(*key)};
      if (!may_hold_suppression_lists(v->viewer)) {
        http::send_problem(r, 403, "this API key lacks permission for the operation");
        v.reset();
      }
    }
    return v;
  };
  routes.get("/v1/suppression-lists",
             [ports, reader, read_scope](const http::Request& q, http::Response& r) {
               if (const auto v = reader(q, r, read_scope))
                 answer_suppression_lists(ports(), v->viewer, q, r);
             });
  routes.post("/v1/suppression-lists", [ports, reader](const http::Request& q, http::Response& r) {
    if (const auto v = reader(q, r, kScopeBuyersWrite))
      answer_suppression_list_create(ports(), v->viewer, v->by, q, r);
  });
  routes.get("/v1/suppression-lists/{id}",
             [ports, reader, read_scope](const http::Request& q, http::Response& r) {
               if (const auto v = reader(q, r, read_scope))
                 answer_suppression_list(ports(), v->viewer, q.match(1), r);
             });
  routes.remove("/v1/suppression-lists/{id}",
                [ports, reader](const http::Request& q, http::Response& r) {
                  if (const auto v = reader(q, r, kScopeBuyersWrite))
                    answer_suppression_list_delete(ports(), v->viewer, v->by, q.match(1), r);
                });
  routes.put_streamed("/v1/suppression-lists/{id}/entries", kMaxSuppressionUploadBytes,
                      [ports, reader](const http::Request& q, http::Response& r) {
                        if (const auto v = reader(q, r, kScopeBuyersWrite))
                          answer_suppression_upload(ports(), v->viewer, v->by, q.match(1), q, r);
                      });
}

}  // namespace leadflow
