#pragma once
// Suppression lists as records (docs/suppression.md): a new list from its JSON form, its JSON
// form, and the reading of an upload of entries into fingerprints. For the API and
// leadflow-admin, so both make lists and read uploads by the same rules.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "leadflow/base/clock.hpp"
#include "leadflow/domain/change_log.hpp"
#include "leadflow/domain/field_error.hpp"
#include "leadflow/store/accounts.hpp"
#include "leadflow/store/audit.hpp"
#include "leadflow/store/suppression.hpp"
#include "leadflow/suppression/suppression_set.hpp"

namespace leadflow {

/// The most distinct entries a list holds.
inline constexpr std::size_t kMaxSuppressionEntries = 10'000'000;
/// The most bytes an upload or an import may carry, clear or inflated from gzip: ten million
/// SHA-256 lines (66 bytes each with CRLF) and room for a header and long e-mails. Both read
/// their text as it comes (only fingerprints are kept), so this bounds the time a gzip bomb
/// takes, not the memory.
inline constexpr std::size_t kMaxSuppressionUploadBytes = std::size_t{1} << 30;

struct NewSuppressionList {
  SuppressionList list;
  FieldErrors errors;
  StoreStatus status = StoreStatus::kOk;  // kUnavailable: the buyer could not be read
};
/// A list from `body` {name, buyer_id}: `name` as every record's (1 to 200 characters, no
/// control characters); `buyer_id`, when given, must name a buyer (an operator's list without
/// it). Its id is new, made at `now_ms`.
NewSuppressionList suppression_list_from_json(const nlohmann::json& body, AccountsStore& accounts,
                                              std::int64_t now_ms);
/// {list_id, name, buyer_id (null for the operator's), entries, created_at, updated_at,
/// uploaded_at (its entries' last replacement; null before the first)}.
nlohmann::json suppression_list_to_json(const SuppressionList& l);

/// Writes a list's change to the change log (record_change, right after the change): kind
/// "suppression_list", action "created", "replaced" (its entries, by an upload or an import) or
/// "deleted", the list's id and name, and the fields `name`, `buyer_id` ("operator" for its own),
/// `entries` (how many) and `uploaded_at`, each from what to what (`before` null for a list made,
/// `after` null for one deleted). Never an entry: the log says how many a list holds, not which.
void note_suppression_list_change(AuditStore& changes, const Clock& clock, const ChangeActor& by,
                                  std::string_view action, const SuppressionList* before,
                                  const SuppressionList* after);

/// An upload of entries, read as it arrives: one entry a line, or the first cell of each line of
/// a CSV; each an e-mail, a phone or a SHA-256 (parse_suppression_entry). A first line that is
/// none of them is a header; blank lines are skipped; any other line that is none of them is
/// rejected (counted, its number kept for the first ten), as is a first cell over 64 KiB. Only
/// fingerprints are kept: the uploaded values are gone once read, and a line costs at most its
/// first cell however long it is. Not thread-safe.
class SuppressionUpload {
 public:
  /// The next piece of the upload (a line may run across pieces).
  void add(std::string_view text);
  /// The end of the upload: reads a last line without its newline.
  void finish();

  std::size_t entries_read() const { return fingerprints_.size(); }
  std::size_t rejected() const { return rejected_; }
  const std::vector<std::size_t>& rejected_lines() const { return rejected_lines_; }
  /// Whether more than kMaxSuppressionEntries entries were read (the upload is refused).
  bool too_many() const { return too_many_; }
  /// The fingerprints read, sorted and distinct.
  std::vector<SuppressionFingerprint> take_sorted();

 private:
  /// The longest first cell kept of a line that runs across pieces; a longer one is no entry.
  static constexpr std::size_t kMaxCell = 64 * 1024;
  void keep(std::string_view part);
  void end_line();
  void line(std::string_view text, bool overlong);

  std::string partial_;     // the first cell of a line running across pieces, so far
  bool cell_done_ = false;  // its first cell is over (a comma came, or it is too long)
  bool overlong_ = false;   // its first cell was longer than kMaxCell
  std::size_t line_no_ = 0;
  std::size_t rejected_ = 0;
  std::vector<std::size_t> rejected_lines_;
  bool too_many_ = false;
  std::vector<SuppressionFingerprint> fingerprints_;
};

}  // namespace leadflow
