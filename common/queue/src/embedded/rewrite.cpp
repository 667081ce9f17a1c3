// Rewriting records in place (QueueProducer::rewrite_payloads; docs/erasure.md): a lead's record
// replaced by its tombstone in the segments the queue still holds.
//
// Only records every group subscribed to their topic has committed in the offsets files already
// on disk are rewritten (the bound retention uses; the commits made so far are flushed first):
// no consumer reads them now, nor after a crash. The new record has the old one's length (a payload
// of the same size, a new CRC), so it is written over the old bytes, and the segment's other
// records stay where they are.
//
// Crash safety: a write over existing bytes can be torn by a crash, leaving a record whose CRC
// fails in the middle of a segment, which the open scan would take as the end of the records (and
// lose every acknowledged record after it). So the new bytes are written to a journal first
// (rewrite.journal: temp file, fsync, rename, fsync of the directory), then over the records,
// then fdatasync'd, and only then is the journal removed. An open finds a journal only if the
// rewrite may not have finished: it writes every record of it again (the same bytes: doing it
// twice is harmless) before it scans the segments. A journal cut short never has its final name.
//
// Journal: u32 magic "LFR1" | u32 count | count × (u32 segment | u32 position | u32 length |
// bytes) | u32 CRC32C of everything before it. Little-endian, as the records.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "embedded/crc32c.hpp"
#include "embedded/file_io.hpp"
#include "embedded/queue_core.hpp"
#include "embedded/record_format.hpp"
#include "leadflow/base/log.hpp"

namespace leadflow::embedded {
namespace {

constexpr std::uint32_t kJournalMagic = 0x3152464C;  // "LFR1"
constexpr const char* kJournalName = "/rewrite.journal";

struct Patch {
  std::uint32_t segment = 0;
  std::uint32_t pos = 0;
  std::string bytes;
};

std::string encode_journal(const std::vector<Patch>& patches) {
  std::string out(8, '\0');
  put_u32(out.data(), kJournalMagic);
  put_u32(out.data() + 4, static_cast<std::uint32_t>(patches.size()));
  for (const Patch& p : patches) {
    char head[12];
    put_u32(head, p.segment);
    put_u32(head + 4, p.pos);
    put_u32(head + 8, static_cast<std::uint32_t>(p.bytes.size()));
    out.append(head, sizeof head).append(p.bytes);
  }
  char crc[4];
  put_u32(crc, crc32c(out.data(), out.size()));
  return out.append(crc, sizeof crc);
}

/// The patches of a journal; false when it is not one whole journal.
bool decode_journal(const std::string& in, std::vector<Patch>& out) {
  if (in.size() < 12 || get_u32(in.data()) != kJournalMagic) return false;
  if (crc32c(in.data(), in.size() - 4) != get_u32(in.data() + in.size() - 4)) return false;
  const std::uint32_t count = get_u32(in.data() + 4);
  std::size_t at = 8;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (in.size() - 4 - at < 12) return false;
    Patch p;
    p.segment = get_u32(in.data() + at);
    p.pos = get_u32(in.data() + at + 4);
    const std::uint32_t len = get_u32(in.data() + at + 8);
    at += 12;
    if (in.size() - 4 - at < len) return false;
    p.bytes.assign(in.data() + at, len);
    at += len;
    out.push_back(std::move(p));
  }
  return at == in.size() - 4;
}

/// Writes each patch over its segment and syncs it; a segment retention deleted meanwhile is
/// skipped (its records are gone with it). False (errno set, `path` named) on an I/O error.
bool apply(const std::string& dir, const std::vector<Patch>& patches, std::string& path) {
  std::map<std::uint32_t, std::vector<const Patch*>> by_segment;
  for (const Patch& p : patches) by_segment[p.segment].push_back(&p);
  for (const auto& [id, list] : by_segment) {
    path = dir + "/" + segment_name(id);
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      return false;
    }
    bool ok = true;
    for (const Patch* p : list)
      ok = ok && write_all(fd, p->bytes.data(), p->bytes.size(), static_cast<off_t>(p->pos));
    ok = ok && ::fdatasync(fd) == 0;
    const int saved = errno;
    ::close(fd);
    errno = saved;
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<std::int64_t> QueueCore::rewrite_payloads(const std::vector<std::string>& topics,
                                                        const std::vector<std::string>& keys,
                                                        const PayloadRewrite& rewrite) {
  if (!healthy_.load()) return std::nullopt;
  if (keys.empty()) return 0;
  std::lock_guard one_at_a_time(rewrite_mu_);
  // The commits made so far onto disk first, so that a record read and committed a moment ago
  // (a lead decided just before its erasure) is rewritable now rather than after the next flush.
  flush_offsets();
  std::vector<std::shared_ptr<Segment>> segments;
  std::map<std::string, std::vector<std::int64_t>, std::less<>> below;  // per topic, partition
  {
    std::lock_guard lock(mu_);
    segments.assign(segments_.begin(), segments_.end());
    for (const std::string& name : topics) {
      auto it = topics_.find(name);
      if (it == topics_.end() || it->second->groups.empty()) continue;  // nobody commits it
      Topic& t = *it->second;
      std::vector<std::int64_t> bound(static_cast<std::size_t>(opts_.partitions),
                                      std::numeric_limits<std::int64_t>::max());
      for (const GroupState* g : t.groups) {
        auto f = g->flushed.find(&t);
        for (std::size_t p = 0; p < bound.size(); ++p)
          bound[p] = f == g->flushed.end() ? 0 : std::min(bound[p], f->second[p]);
      }
      below.emplace(name, std::move(bound));
    }
  }
  if (below.empty()) return 0;
  const std::set<std::string, std::less<>> wanted(keys.begin(), keys.end());

  std::vector<Patch> patches;
  for (const auto& seg : segments) {
    struct stat st {};
    if (::fstat(seg->fd, &st) != 0) return fail_io("stat segment", seg->path, errno), std::nullopt;
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size == 0) continue;
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, seg->fd, 0);
    if (map == MAP_FAILED) return fail_io("map segment", seg->path, errno), std::nullopt;
    const char* data = static_cast<const char*>(map);
    // Records end where the bytes stop decoding: the writer's preallocated zeros, or a record
    // being written now (after every record this may rewrite, which are committed).
    for (std::size_t pos = 0; pos < size;) {
      DecodedRecord r;
      const std::size_t len = decode_record(data + pos, size - pos, r);
      if (len == 0) break;
      const auto bound = below.find(r.topic);
      if (bound != below.end() && r.partition < bound->second.size() &&
          r.offset < bound->second[r.partition] && wanted.count(r.key) != 0) {
        std::optional<std::string> payload = rewrite(r.payload);
        if (payload && payload->size() == r.payload.size() && *payload != r.payload) {
          Patch p{seg->id, static_cast<std::uint32_t>(pos), std::string(data + pos, len)};
          const std::size_t at = static_cast<std::size_t>(r.payload.data() - (data + pos));
          p.bytes.replace(at, payload->size(), *payload);
          put_u32(p.bytes.data() + 8, crc32c(p.bytes.data() + kCrcStart, len - kCrcStart));
          patches.push_back(std::move(p));
        }
      }
      pos += len;
    }
    ::munmap(map, size);
  }
  if (patches.empty()) return 0;

  const std::string journal = dir_ + kJournalName;
  if (!write_file_atomically(journal, encode_journal(patches)) || !fsync_dir(dir_))
    return fail_io("write rewrite journal", journal, errno), std::nullopt;
  if (stop_after_journal.load()) return std::nullopt;  // a test's crash, right here
  std::string path;
  if (!apply(dir_, patches, path)) return fail_io("rewrite record", path, errno), std::nullopt;
  if (::unlink(journal.c_str()) != 0 || !fsync_dir(dir_))
    return fail_io("remove rewrite journal", journal, errno), std::nullopt;
  log(LogLevel::kDebug, "queue_records_rewritten", {{"records", patches.size()}});
  return static_cast<std::int64_t>(patches.size());
}

bool QueueCore::redo_rewrites(std::string& error) {
  const std::string journal = dir_ + kJournalName;
  std::string content;
  if (!std::filesystem::exists(journal)) return true;
  std::vector<Patch> patches;
  if (!read_file(journal, content) || !decode_journal(content, patches)) {
    // Renamed into place only once whole and synced: this is damage, not a cut-short write.
    error = "embedded queue: " + journal + " is unreadable; move it away to open the queue";
    return false;
  }
  std::string path;
  if (!apply(dir_, patches, path)) {
    error = "embedded queue: cannot rewrite records in " + path + ": " + errno_text(errno);
    return false;
  }
  if (::unlink(journal.c_str()) != 0 || !fsync_dir(dir_)) {
    error = "embedded queue: cannot remove " + journal + ": " + errno_text(errno);
    return false;
  }
  log(LogLevel::kWarn, "queue_rewrite_redone", {{"records", patches.size()}});
  return true;
}

}  // namespace leadflow::embedded

namespace leadflow::embedded_queue_detail {

void stop_rewrites_after_journal(LeadQueue& queue) {
  if (auto* core = dynamic_cast<embedded::QueueCore*>(&queue.producer()))
    core->stop_after_journal.store(true);
}

}  // namespace leadflow::embedded_queue_detail
