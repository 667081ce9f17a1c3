#include "leadflow/management/suppression_lists.hpp"

#include <algorithm>

#include "leadflow/base/ids.hpp"
#include "leadflow/base/text.hpp"
#include "leadflow/base/time_format.hpp"
#include "leadflow/management/management.hpp"
#include "leadflow/validation/validation.hpp"

namespace leadflow {

namespace {
constexpr std::size_t kMaxListName = 200;

// A list as the change log compares it: what an operator asks of a change (which list, whose:
// a buyer's id or "operator", as GET /v1/suppression-lists?buyer_id= names the owner; how many
// entries, when they were last replaced), never an entry.
nlohmann::json change_view(const SuppressionList* l) {
  if (!l) return nullptr;
  const nlohmann::json full = suppression_list_to_json(*l);
  return {{"name", full["name"]},
          {"buyer_id", l->buyer_id.empty() ? "operator" : l->buyer_id},
          {"entries", full["entries"]},
          {"uploaded_at", full["uploaded_at"]}};
}
}  // namespace

NewSuppressionList suppression_list_from_json(const nlohmann::json& body, AccountsStore& accounts,
                                              std::int64_t now_ms) {
  NewSuppressionList out;
  if (!body.is_object()) {
    out.errors.push_back({"body", "invalid_type", "must be a JSON object"});
    return out;
  }
  SuppressionList& l = out.list;
  const auto name = body.find("name");
  if (name == body.end() || name->is_null()) {
    out.errors.push_back({"name", "required", "is required"});
  } else if (!name->is_string()) {
    out.errors.push_back({"name", "invalid_type", "must be a string"});
  } else {
    l.name = name->get<std::string>();
    if (auto refused = refuse_free_text(l.name, kMaxListName))
      out.errors.push_back(
          {"name", refused->code,
           refused->code == "too_long" ? "must be 1 to 200 characters" : refused->message});
    else if (l.name.empty())
      out.errors.push_back({"name", "required", "must be 1 to 200 characters"});
  }
  const auto buyer = body.find("buyer_id");
  if (buyer != body.end() && !buyer->is_null()) {
    if (!buyer->is_string()) {
      out.errors.push_back({"buyer_id", "invalid_type", "must be a string"});
    } else {
      l.buyer_id = buyer->get<std::string>();
      const Lookup<Buyer> found = accounts.get_buyer(l.buyer_id);
      if (found.status == StoreStatus::kUnavailable)
        out.status = StoreStatus::kUnavailable;
      else if (!found.value)
        out.errors.push_back({"buyer_id", "not_found", "no such buyer"});
    }
  }
  for (const auto& [key, value] : body.items())
    if (key != "name" && key != "buyer_id")
      out.errors.push_back({key, "unknown_field", "is not a field of a suppression list"});
  l.id = new_id(kSuppressionListPrefix, now_ms);
  l.created_at_ms = l.updated_at_ms = now_ms;
  return out;
}

nlohmann::json suppression_list_to_json(const SuppressionList& l) {
  return {
      {"list_id", l.id},
      {"name", l.name},
      {"buyer_id", l.buyer_id.empty() ? nlohmann::json() : nlohmann::json(l.buyer_id)},
      {"entries", l.entries},
      {"created_at", format_rfc3339_ms(l.created_at_ms)},
      {"updated_at", format_rfc3339_ms(l.updated_at_ms)},
      // The last upload of its entries; null while none was made.
      {"uploaded_at", l.entries_version == 0 ? nlohmann::json()
                                             : nlohmann::json(format_rfc3339_ms(l.updated_at_ms))}};
}

void note_suppression_list_change(AuditStore& changes, const Clock& clock, const ChangeActor& by,
                                  std::string_view action, const SuppressionList* before,
                                  const SuppressionList* after) {
  const SuppressionList* named = after ? after : before;
  if (!named) return;
  record_change(changes, clock, by, action, "suppression_list", named->id, change_view(before),
                change_view(after));
}

void SuppressionUpload::add(std::string_view text) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    if (nl == std::string_view::npos) {
      keep(text);
      return;
    }
    if (partial_.empty() && !cell_done_) {
      line(text.substr(0, nl), false);  // the whole line is in this piece
    } else {
      keep(text.substr(0, nl));
      end_line();
    }
    text.remove_prefix(nl + 1);
  }
}

void SuppressionUpload::finish() {
  if (!partial_.empty() || cell_done_) end_line();
}

// Keeps what a line running across pieces holds of its first cell, no more: the rest of a CSV
// line is never read, and a cell longer than any entry is none, so a line costs at most
// kMaxCell bytes however long the client makes it.
void SuppressionUpload::keep(std::string_view part) {
  if (cell_done_) return;
  if (const auto comma = part.find(','); comma != std::string_view::npos) {
    part = part.substr(0, comma);
    cell_done_ = true;
  }
  if (partial_.size() + part.size() > kMaxCell + 1) {  // its CR may still follow
    overlong_ = cell_done_ = true;
    partial_.clear();
    partial_.shrink_to_fit();
    return;
  }
  partial_.append(part);
}

void SuppressionUpload::end_line() {
  line(partial_, overlong_);
  partial_.clear();
  cell_done_ = overlong_ = false;
}

void SuppressionUpload::line(std::string_view text, bool overlong) {
  ++line_no_;
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  // The first cell of a CSV line (a quoted cell holds no comma of ours: an entry has none).
  const std::string_view cell = text.substr(0, text.find(','));
  overlong = overlong || cell.size() > kMaxCell;
  if (!overlong && trim(cell).empty()) return;
  const SuppressionEntry e = overlong ? SuppressionEntry{} : parse_suppression_entry(cell);
  std::optional<SuppressionFingerprint> f;
  if (e.kind == SuppressionEntry::Kind::kSha256)
    f = fingerprint_of_sha256_hex(e.value);
  else if (e.kind != SuppressionEntry::Kind::kNone)
    f = fingerprint_of_value(e.value);
  if (!f) {
    if (line_no_ == 1) return;  // a header
    ++rejected_;
    if (rejected_lines_.size() < 10) rejected_lines_.push_back(line_no_);
    return;
  }
  if (fingerprints_.size() >= kMaxSuppressionEntries) {
    // Repeats are dropped only at the end: counted here, a list of repeats is refused early.
    too_many_ = true;
    return;
  }
  fingerprints_.push_back(*f);
}

std::vector<SuppressionFingerprint> SuppressionUpload::take_sorted() {
  std::sort(fingerprints_.begin(), fingerprints_.end());
  fingerprints_.erase(std::unique(fingerprints_.begin(), fingerprints_.end()), fingerprints_.end());
  return std::move(fingerprints_);
}

}  // namespace leadflow
