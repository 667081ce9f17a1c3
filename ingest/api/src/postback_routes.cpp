// The postback endpoints' routes: decode, authorise (a seller its own endpoints, the operator
// every one; never a buyer), call the postbacks port, encode. The secret is shown once, in the
// answer that made the endpoint or rotated its secret. What an event says, when it is retried and
// how long a replaced secret signs is common/postbacks'. Each change of an endpoint is noted in
// the change log, its secret never: it reads "(secret)".
#include "postback_routes.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "auth.hpp"
#include "errors.hpp"
#include "leadflow/api/http_util.hpp"
#include "leadflow/base/ids.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/domain/address_policy.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/postbacks/rules.hpp"
#include "pages.hpp"
#include "versions.hpp"

namespace leadflow {
namespace {

using nlohmann::json;

json or_time(std::int64_t ms) { return ms == 0 ? json(nullptr) : json(format_rfc3339_ms(ms)); }

json endpoint_view(const PostbackEndpoint& e, bool with_secret, std::int64_t now_ms) {
  json events = json::array();
  for (postbacks::EventKind k : postbacks::events_of_text(e.events))
    events.push_back(postbacks::kind_name(k));
  json out = {
      {"id", e.id},
      {"seller_id", e.seller_id},
      {"campaign_id", e.campaign_id.empty() ? json(nullptr) : json(e.campaign_id)},
      {"url", e.url},
      {"events", std::move(events)},
      {"active", e.active},
      {"version", e.version},
      {"switched_off_at", e.active ? json(nullptr) : or_time(e.off_since_ms)},
      {"created_at", or_time(e.created_at_ms)},
      {"updated_at", or_time(e.updated_at_ms)},
      {"secret_rotated_at", or_time(e.secret_rotated_at_ms)},
      {"previous_secret_expires_at",
       postbacks::previous_secret_valid(e.previous_secret, e.previous_secret_expires_at_ms, now_ms)
           ? or_time(e.previous_secret_expires_at_ms)
           : json(nullptr)}};
  if (with_secret) out["secret"] = e.secret;
  return out;
}

/// An endpoint as the change log compares it: its view with the secret, which the log reads as
/// "(secret)" (a change of it is noted, never the value).
json logged_view(const PostbackEndpoint& e, std::int64_t now_ms) {
  return endpoint_view(e, true, now_ms);
}

/// How long the replaced secret signs on, from a rotation's body ({} or none: the default).
std::int64_t decode_rotation(const http::Request& req, FieldErrors& errors) {
  std::int64_t seconds = postbacks::kDefaultPreviousValidSeconds;
  if (trim(req.body()).empty()) return seconds;
  const json body = json::parse(req.body(), nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    errors.push_back({"body", "invalid_json", "not a JSON object"});
    return seconds;
  }
  for (const auto& [name, value] : body.items())
    if (name != "previous_valid_for_seconds")
      errors.push_back({name, "unknown_field", "is not a field of a rotation"});
  if (auto it = body.find("previous_valid_for_seconds"); it != body.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 0 ||
        it->get<std::int64_t>() > postbacks::kMaxPreviousValidSeconds)
      errors.push_back({"previous_valid_for_seconds", "out_of_range",
                        "whole seconds from 0 (the old secret ends now) to 604800 (7 days)"});
    else
      seconds = it->get<std::int64_t>();
  }
  return seconds;
}

json delivery_view(const PostbackDelivery& d) {
  return {{"event_id", d.facts.event_id},
          {"type", d.facts.kind},
          {"lead_id", d.facts.lead_id},
          {"occurred_at", or_time(d.facts.occurred_at_ms)},
          {"state", to_string(d.state)},
          {"attempts", d.attempts},
          {"last_status", d.last_status == 0 ? json(nullptr) : json(d.last_status)},
          {"last_error", d.last_error.empty() ? json(nullptr) : json(d.last_error)},
          {"next_attempt_at",
           d.state == PostbackState::kPending ? or_time(d.next_at_ms) : json(nullptr)},
          {"delivered_at", or_time(d.delivered_at_ms)}};
}

json attempt_view(const PostbackAttempt& a) {
  return {{"at", format_rfc3339_ms(a.at_ms)},
          {"status", a.status == 0 ? json(nullptr) : json(a.status)},
          {"latency_ms", static_cast<double>(a.latency_us) / 1000.0},
          {"error", a.error.empty() ? json(nullptr) : json(a.error)},
          {"then", to_string(a.then)}};
}

/// The url and events of a body into `e`, each field at fault into `errors`; `creating` makes
/// them required.
void decode_endpoint(const json& body, bool creating, bool allow_private, PostbackEndpoint& e,
                     FieldErrors& errors) {
  for (const auto& [name, value] : body.items())
    if (name != "url" && name != "events" && name != "active" &&
        !(creating && (name == "seller_id" || name == "campaign_id")))
      errors.push_back({name, "unknown_field", "is not a field of a postback endpoint"});
  if (auto it = body.find("url"); it != body.end()) {
    std::string why;
    if (!it->is_string() || it->get_ref<const std::string&>().size() > 2000)
      errors.push_back({"url", "invalid_type", "an http(s) URL of at most 2000 characters"});
    else if (!allow_private && !is_public_http_url(it->get<std::string>(), &why))
      errors.push_back({"url", "not_allowed", why});
    else if (allow_private && !it->get_ref<const std::string&>().starts_with("http"))
      errors.push_back({"url", "invalid_format", "an http(s) URL"});
    else
      e.url = it->get<std::string>();
  } else if (creating) {
    errors.push_back({"url", "required", "the URL the events are posted to"});
  }
  if (auto it = body.find("events"); it != body.end()) {
    std::vector<postbacks::EventKind> kinds;
    bool ok = it->is_array() && !it->empty();
    if (ok)
      for (const auto& v : *it) {
        const auto k = v.is_string() ? postbacks::parse_kind(v.get<std::string>()) : std::nullopt;
        if (!k)
          ok = false;
        else
          kinds.push_back(*k);
      }
    if (!ok)
      errors.push_back({"events", "invalid",
                        "one or more of lead.sold, lead.unsold, "
                        "lead.returned, lead.settled"});
    else
      e.events = postbacks::events_text(kinds);
  } else if (creating) {
    errors.push_back({"events", "required", "the events the endpoint takes"});
  }
  if (auto it = body.find("active"); it != body.end()) {
    if (!it->is_boolean())
      errors.push_back({"active", "invalid_type", "true or false"});
    else
      e.active = it->get<bool>();
  }
}

/// The change log's kind of a postback endpoint.
constexpr std::string_view kChangeKind = "postback_endpoint";

class PostbackRoutes {
 public:
  explicit PostbackRoutes(IngestContext& ctx) : ctx_(ctx) {}

  /// The key when it may manage postbacks: a seller's or the operator's (a buyer's: 403).
  std::optional<ApiKey> manager(const http::Request& req, http::Response& res, Scope scope) {
    if (ctx_.postbacks == nullptr) {
      send_problem(res, refusal_for(PostbackRefused::kOff));
      return std::nullopt;
    }
    auto key = authorise(ctx_, req, res, scope);
    if (!key) return std::nullopt;  // 401, 403, 429 or 503 sent
    if (!key->buyer_id.empty()) {
      send_problem(res, refusal_for(PostbackRefused::kNotSellerOrOperator));
      return std::nullopt;
    }
    return key;
  }

  /// The endpoint `id` when `key` may see it; otherwise the answer is sent (404 alike for
  /// another seller's).
  std::optional<PostbackEndpoint> owned(const ApiKey& key, std::string_view id,
                                        http::Response& res) {
    auto found = ctx_.postbacks->get_postback_endpoint(id);
    if (found.status == StoreStatus::kUnavailable) {
      send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
      return std::nullopt;
    }
    if (!found.value || (!key.is_operator() && found.value->seller_id != key.seller_id)) {
      send_problem(res, refusal_for(PostbackRefused::kNoSuchEndpoint));
      return std::nullopt;
    }
    return std::move(found.value);
  }

  /// Whether `e` is failing: on, with its last attempts from every process all failed (false
  /// when off or never tried; null when the store could not say).
  json failing_of(const PostbackEndpoint& e) {
    if (!e.active) return false;
    const auto recent =
        ctx_.postbacks->recent_postback_attempts(e.id, static_cast<int>(postbacks::kFailingAfter));
    if (!recent) return nullptr;
    std::vector<int> statuses;
    for (const PostbackAttempt& a : *recent) statuses.push_back(a.status);
    return postbacks::endpoint_failing_by_status(statuses);
  }
  /// The endpoint's view with `failing` (read from the store unless the caller knows it).
  json view_of(const PostbackEndpoint& e, bool with_secret, std::int64_t now_ms,
               std::optional<bool> failing = std::nullopt) {
    json out = endpoint_view(e, with_secret, now_ms);
    out["failing"] = failing ? json(*failing) : failing_of(e);
    return out;
  }

  void list(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsRead);
    if (!key) return;
    FieldErrors errors;
    unknown_params(req, {"seller_id"}, errors);
    if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
    const std::string seller = key->is_operator() ? req.param("seller_id") : key->seller_id;
    const auto all = ctx_.postbacks->list_postback_endpoints(seller);
    if (!all) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    json data = json::array();
    // One read of every endpoint's latest attempts rather than one per endpoint listed.
    const auto recent = ctx_.postbacks->recent_postback_statuses(postbacks::kFailingAfter);
    std::set<std::string, std::less<>> failing;
    if (recent)
      for (const RecentStatuses& r : *recent)
        if (postbacks::endpoint_failing_by_status(r.statuses)) failing.insert(r.endpoint_id);
    for (const auto& e : *all) {
      json view = endpoint_view(e, false, ctx_.clock.now_ms());
      view["failing"] = recent ? json(failing.contains(e.id)) : json(nullptr);
      data.push_back(std::move(view));
    }
    http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
  }

  void create(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsWrite);
    if (!key) return;
    const auto body = http::parse_body(req, res);
    if (!body) return;  // 400 sent
    PostbackEndpoint e;
    FieldErrors errors;
    decode_endpoint(*body, true, ctx_.config.allow_private_buyers, e, errors);
    const auto text = [&](const char* name) -> std::string {
      const auto it = body->find(name);
      if (it == body->end() || it->is_null()) return "";
      if (!it->is_string()) errors.push_back({name, "invalid_type", "an id"});
      return it->is_string() ? it->get<std::string>() : "";
    };
    e.seller_id = text("seller_id");
    e.campaign_id = text("campaign_id");
    if (!key->is_operator()) {
      if (!e.seller_id.empty() && e.seller_id != key->seller_id)
        errors.push_back({"seller_id", "not_allowed", "a seller makes endpoints of its own"});
      e.seller_id = key->seller_id;
    } else if (e.seller_id.empty()) {
      errors.push_back({"seller_id", "required", "the seller the endpoint is for"});
    }
    if (!errors.empty()) return http::send_problem(res, 400, "the endpoint is invalid", errors);
    const auto seller = ctx_.accounts.get_seller(e.seller_id);
    if (seller.status == StoreStatus::kUnavailable)
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    if (!seller.value)
      return http::send_problem(res, 400, "the endpoint is invalid",
                                {{"seller_id", "not_found", "no such seller"}});
    if (!e.campaign_id.empty()) {
      const auto campaign = ctx_.accounts.get_campaign(e.campaign_id);
      if (campaign.status == StoreStatus::kUnavailable)
        return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
      if (!campaign.value || campaign.value->seller_id != e.seller_id)
        return http::send_problem(res, 400, "the endpoint is invalid",
                                  {{"campaign_id", "not_found", "no such campaign of the seller"}});
    }
    e.id = new_id(postbacks::kEndpointPrefix);
    e.secret = postbacks::new_endpoint_secret();
    e.created_at_ms = e.updated_at_ms = ctx_.clock.now_ms();
    const postbacks::Spell spell = postbacks::first_spell(e.active, e.created_at_ms);
    e.on_since_ms = spell.on_since_ms;
    e.off_since_ms = spell.off_since_ms;
    if (const StoreStatus s = ctx_.postbacks->insert_postback_endpoint(e); s != StoreStatus::kOk)
      return send_problem(res, refusal_for(s, StoreStep::kWrite));
    record_change(ctx_.changes, ctx_.clock, actor_of(*key), "created", kChangeKind, e.id, {},
                  logged_view(e, e.created_at_ms));
    res.set_header("Location", "/v1/postback-endpoints/" + e.id);
    set_etag(res, e.version);
    http::send_json(res, 201,
                    {{"success", true}, {"data", view_of(e, true, ctx_.clock.now_ms(), false)}});
  }

  void get(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsRead);
    if (!key) return;
    const auto e = owned(*key, req.match(1), res);
    if (!e) return;
    set_etag(res, e->version);
    http::send_json(res, 200,
                    {{"success", true}, {"data", view_of(*e, false, ctx_.clock.now_ms())}});
  }

  /// The body applied to the endpoint as it is when written, at the version it was read
  /// (docs/versions.md): If-Match's version, or any with none, the fields the body does not name
  /// keeping what another change wrote meanwhile.
  void update(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsWrite);
    if (!key) return;
    const std::string id(req.match(1));
    if (!owned(*key, id, res)) return;
    auto body = http::parse_body(req, res);
    if (!body) return;
    // `version` is read-only, a figure of the view that a client may send back as it read it.
    if (auto v = body->find("version"); v != body->end()) {
      if (!v->is_number_integer())
        return http::send_problem(res, 400, "the endpoint is invalid",
                                  {{"version", "invalid_type", "must be an integer"}});
      body->erase(v);
    }
    const std::int64_t now_ms = ctx_.clock.now_ms();
    bool fan_out_first = false;
    PostbackEndpoint written;
    const Management::Created changed = change_record<PostbackEndpoint>(
        if_match_of(req), [&] { return ctx_.postbacks->get_postback_endpoint(id); },
        [&](PostbackEndpoint& e, FieldErrors& errors) {
          const PostbackEndpoint was = e;
          decode_endpoint(*body, false, ctx_.config.allow_private_buyers, e, errors);
          e.updated_at_ms = now_ms;
          const postbacks::Spell spell =
              postbacks::switched({e.on_since_ms, e.off_since_ms}, was.active, e.active, now_ms);
          e.on_since_ms = spell.on_since_ms;
          e.off_since_ms = spell.off_since_ms;
          fan_out_first = postbacks::fans_out_first(was.active, was.events, e.active, e.events);
        },
        [&](PostbackEndpoint& e) {
          const StoreStatus s = ctx_.postbacks->update_postback_endpoint(e, fan_out_first);
          if (s == StoreStatus::kOk) written = e;
          return s;
        },
        [&](const PostbackEndpoint& e) { return logged_view(e, now_ms); });
    if (!changed.errors.empty())
      return http::send_problem(res, 400, "the endpoint is invalid", changed.errors);
    if (refuse_version(res, changed, "postback endpoint")) return;
    if (changed.status == StoreStatus::kNotFound)  // deleted since it was read
      return send_problem(res, refusal_for(PostbackRefused::kNoSuchEndpoint));
    if (changed.status != StoreStatus::kOk)
      return send_problem(res, refusal_for(changed.status, StoreStep::kWrite));
    record_change(ctx_.changes, ctx_.clock, actor_of(*key), "updated", kChangeKind, id,
                  changed.before, changed.body);
    set_etag(res, written.version);
    http::send_json(res, 200, {{"success", true}, {"data", view_of(written, false, now_ms)}});
  }

  /// Honours If-Match as a change does: deleted only at the version it names (412 otherwise).
  void remove(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsWrite);
    if (!key) return;
    const auto e = owned(*key, req.match(1), res);
    if (!e) return;
    const IfMatch if_match = if_match_of(req);
    Management::Created stale;
    stale.status = StoreStatus::kConflict;
    stale.stale = true;
    stale.version = e->version;
    if (!if_match.allows(e->version)) {
      refuse_version(res, stale, "postback endpoint");
      return;
    }
    const StoreStatus s =
        ctx_.postbacks->delete_postback_endpoint(e->id, if_match.any ? 0 : e->version);
    if (s == StoreStatus::kConflict) {  // changed since it was read
      const auto now = ctx_.postbacks->get_postback_endpoint(e->id);
      if (now.value) stale.version = now.value->version;
      refuse_version(res, stale, "postback endpoint");
      return;
    }
    if (s == StoreStatus::kNotFound)  // deleted since it was read
      return send_problem(res, refusal_for(PostbackRefused::kNoSuchEndpoint));
    if (s != StoreStatus::kOk) return send_problem(res, refusal_for(s, StoreStep::kWrite));
    record_change(ctx_.changes, ctx_.clock, actor_of(*key), "deleted", kChangeKind, e->id,
                  logged_view(*e, ctx_.clock.now_ms()), {});
    res.status = 204;
  }

  /// A new secret, shown in this answer alone; the one it replaces signs too until the overlap
  /// the body asks for (24 hours by default) ends.
  void rotate(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsWrite);
    if (!key) return;
    const auto e = owned(*key, req.match(1), res);
    if (!e) return;
    FieldErrors errors;
    const std::int64_t valid_for_s = decode_rotation(req, errors);
    if (!errors.empty()) return http::send_problem(res, 400, "the rotation is invalid", errors);
    SecretRotation r;
    r.endpoint_id = e->id;
    r.secret = postbacks::new_endpoint_secret();
    r.at_ms = ctx_.clock.now_ms();
    r.previous_expires_at_ms = postbacks::previous_secret_expiry(r.at_ms, valid_for_s);
    r.expected_secret = e->secret;
    if (postbacks::rotation_ends_a_signing_secret(
            e->previous_secret, e->previous_secret_expires_at_ms, r.at_ms, valid_for_s))
      return http::send_problem(
          res, 409,
          "the secret replaced at " + format_rfc3339_ms(e->secret_rotated_at_ms) +
              " still signs until " + format_rfc3339_ms(e->previous_secret_expires_at_ms) +
              ": another rotation now would end it at once, breaking a receiver that has not "
              "switched yet. Rotate again after then, or with previous_valid_for_seconds 0 to "
              "end every old secret now");
    const auto rotated = ctx_.postbacks->rotate_postback_secret(r);
    if (rotated.status == StoreStatus::kNotFound)  // deleted since it was read
      return send_problem(res, refusal_for(PostbackRefused::kNoSuchEndpoint));
    if (rotated.status == StoreStatus::kConflict)
      return send_problem(res, refusal_for(PostbackRefused::kRotatedMeanwhile));
    if (rotated.status != StoreStatus::kOk || !rotated.value)
      return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kWrite));
    record_change(ctx_.changes, ctx_.clock, actor_of(*key), "secret_rotated", kChangeKind, e->id,
                  logged_view(*e, r.at_ms), logged_view(*rotated.value, r.at_ms));
    set_etag(res, rotated.value->version);
    http::send_json(res, 200,
                    {{"success", true}, {"data", view_of(*rotated.value, true, r.at_ms)}});
  }

  void deliveries(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsRead);
    if (!key) return;
    const auto e = owned(*key, req.match(1), res);
    if (!e) return;
    FieldErrors errors;
    unknown_params(req, {"limit", "cursor"}, errors);
    struct Page {
      int limit = 25;
      std::string before;
    } q;
    parse_limit(req, q.limit, errors);
    if (req.has_param("cursor")) {
      q.before = http::decode_cursor(req.param("cursor"));
      if (!is_valid_id(q.before, postbacks::kEventPrefix))
        errors.push_back({"cursor", "invalid_format", "not a cursor of this list"});
    }
    if (!errors.empty()) return http::send_problem(res, 400, "invalid query parameters", errors);
    send_page(
        res, q,
        [&](const Page& ask) {
          return ctx_.postbacks->list_postback_deliveries(e->id, ask.before, ask.limit);
        },
        [](const PostbackDelivery& d) { return d.facts.event_id; }, delivery_view);
  }

  void attempts(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsRead);
    if (!key) return;
    const auto e = owned(*key, req.match(1), res);
    if (!e) return;
    const auto all = ctx_.postbacks->list_postback_attempts(e->id, req.match(2));
    if (!all) return send_problem(res, refusal_for(StoreStatus::kUnavailable, StoreStep::kRead));
    json data = json::array();
    for (const auto& a : *all) data.push_back(attempt_view(a));
    http::send_json(res, 200, {{"success", true}, {"data", std::move(data)}});
  }

  void replay(const http::Request& req, http::Response& res) {
    const auto key = manager(req, res, kScopeLeadsWrite);
    if (!key) return;
    const auto e = owned(*key, req.match(1), res);
    if (!e) return;
    const StoreStatus s = ctx_.postbacks->replay_postback(e->id, req.match(2), ctx_.clock.now_ms());
    if (s == StoreStatus::kNotFound)
      return send_problem(res, refusal_for(PostbackRefused::kNoSuchEvent));
    if (s != StoreStatus::kOk) return send_problem(res, refusal_for(s, StoreStep::kWrite));
    http::send_json(res, 202,
                    {{"success", true},
                     {"data", {{"event_id", std::string(req.match(2))}, {"state", "pending"}}}});
  }

 private:
  IngestContext& ctx_;
};

}  // namespace

void register_postback_endpoints(Routes& routes, IngestContext& ctx) {
  auto r = std::make_shared<PostbackRoutes>(ctx);
  const auto bind = [r](void (PostbackRoutes::*m)(const http::Request&, http::Response&)) {
    return [r, m](const http::Request& q, http::Response& s) { ((*r).*m)(q, s); };
  };
  routes.get("/v1/postback-endpoints", bind(&PostbackRoutes::list));
  routes.post("/v1/postback-endpoints", bind(&PostbackRoutes::create));
  routes.get("/v1/postback-endpoints/{id}", bind(&PostbackRoutes::get));
  routes.patch("/v1/postback-endpoints/{id}", bind(&PostbackRoutes::update));
  routes.remove("/v1/postback-endpoints/{id}", bind(&PostbackRoutes::remove));
  routes.post("/v1/postback-endpoints/{id}/rotate-secret", bind(&PostbackRoutes::rotate));
  routes.get("/v1/postback-endpoints/{id}/deliveries", bind(&PostbackRoutes::deliveries));
  routes.get("/v1/postback-endpoints/{id}/deliveries/{event_id}/attempts",
             bind(&PostbackRoutes::attempts));
  routes.post("/v1/postback-endpoints/{id}/deliveries/{event_id}/replay",
              bind(&PostbackRoutes::replay));
}

}  // namespace leadflow
