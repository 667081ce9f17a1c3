// Opening a queue directory: the options check, the directory lock, the META file, the groups'
// offsets files and the scan of every segment that rebuilds the index (and truncates a torn tail).
// Also what metrics read of the groups: their backlog and lag.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <sstream>

#include "embedded/file_io.hpp"
#include "embedded/queue_core.hpp"
#include "embedded/record_format.hpp"
#include "leadflow/base/log.hpp"
#include "leadflow/base/text.hpp"

namespace leadflow::embedded {

bool QueueCore::validate(std::string& error) const {
  if (opts_.dir.empty()) {
    error = "embedded queue: options.dir is empty";
  } else if (opts_.partitions < 1 || opts_.partitions > 4096) {
    error = "embedded queue: options.partitions must be between 1 and 4096";
  } else if (opts_.max_backlog < 1) {
    error = "embedded queue: options.max_backlog must be positive";
  } else if (opts_.segment_bytes < 4096 || opts_.segment_bytes > kMaxSegmentBytes) {
    error = "embedded queue: options.segment_bytes must be between 4 KiB and 1 GiB";
  } else if (opts_.offsets_flush_interval.count() <= 0) {
    error = "embedded queue: options.offsets_flush_interval must be positive";
  } else {
    return true;
  }
  return false;
}

bool QueueCore::check_meta(std::string& error) {
  const std::string path = dir_ + "/META";
  std::string content;
  const std::string expected =
      "leadflow-queue 1\npartitions " + std::to_string(opts_.partitions) + "\n";
  if (read_file(path, content)) {
    if (content == expected) return true;
    std::istringstream in(content);
    std::string word, version, key;
    int partitions = 0;
    if (in >> word >> version >> key >> partitions && word == "leadflow-queue" && version == "1" &&
        key == "partitions") {
      error = "queue directory " + dir_ + " was created with " + std::to_string(partitions) +
              " partitions but options.partitions is " + std::to_string(opts_.partitions);
    } else {
      error = "queue directory " + dir_ + " has an unreadable META file";
    }
    return false;
  }
  if (errno != ENOENT) {
    error = "embedded queue: cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  if (!write_file_atomically(path, expected) || !fsync_dir(dir_)) {
    error = "embedded queue: cannot write " + path + ": " + errno_text(errno);
    return false;
  }
  return true;
}

bool QueueCore::load_offsets(const std::string& path, std::string& error) {
  std::string content;
  if (!read_file(path, content)) {
    error = "embedded queue: cannot read " + path + ": " + errno_text(errno);
    return false;
  }
  std::istringstream in(content);
  std::string word, version, hex, name;
  auto bad = [&] {
    error = "embedded queue: malformed offsets file " + path +
            " (remove it to make its group start again from the oldest record)";
    return false;
  };
  if (!(in >> word >> version) || word != "leadflow-offsets" || version != "1") return bad();
  if (!(in >> word >> hex) || word != "group" || !from_hex(hex, name)) return bad();
  auto group = std::make_unique<GroupState>();
  group->name = name;
  std::size_t topics = 0;
  for (;;) {
    if (!(in >> word)) return bad();
    if (word == "end") {
      std::size_t count = 0;
      if (!(in >> count) || count != topics) return bad();
      break;
    }
    int partitions = 0;
    std::string topic_name;
    if (word != "topic" || !(in >> hex >> partitions) || !from_hex(hex, topic_name)) return bad();
    if (partitions != opts_.partitions) return bad();
    std::vector<std::int64_t> values(static_cast<std::size_t>(partitions));
    for (auto& v : values) {
      if (!(in >> v) || v < 0) return bad();
    }
    Topic& t = topic_locked(topic_name);
    t.groups.push_back(group.get());
    group->committed[&t] = values;
    group->flushed[&t] = std::move(values);
    ++topics;
  }
  if (groups_.count(name) != 0) return bad();
  groups_.emplace(name, std::move(group));
  return true;
}

Topic& QueueCore::topic_locked(std::string_view name) {
  auto it = topics_.find(name);
  if (it != topics_.end()) return *it->second;
  auto t = std::make_unique<Topic>();
  t->name = std::string(name);
  t->parts.resize(static_cast<std::size_t>(opts_.partitions));
  Topic& ref = *t;
  topics_.emplace(t->name, std::move(t));
  return ref;
}

bool QueueCore::scan_segment(Segment& seg, bool last, std::string& error) {
  struct stat st {};
  if (::fstat(seg.fd, &st) != 0) {
    error = "embedded queue: cannot stat " + seg.path + ": " + errno_text(errno);
    return false;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) return true;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, seg.fd, 0);
  if (map == MAP_FAILED) {
    error = "embedded queue: cannot map " + seg.path + ": " + errno_text(errno);
    return false;
  }
  const char* data = static_cast<const char*>(map);
  std::size_t pos = 0;
  std::int64_t skipped = 0;
  while (pos < size) {
    DecodedRecord r;
    const std::size_t len = decode_record(data + pos, size - pos, r);
    if (len == 0) break;
    if (r.partition >= static_cast<std::uint32_t>(opts_.partitions) || r.offset < 0) {
      ++skipped;
      pos += len;
      continue;
    }
    Topic& t = topic_locked(r.topic);
    Partition& part = t.parts[r.partition];
    if (r.offset < part.end) {  // a duplicate or out-of-order offset: cannot come from the writer
      ++skipped;
      pos += len;
      continue;
    }
    part.end = r.offset + 1;
    auto& max_off = seg.max_offset[{&t, static_cast<int>(r.partition)}];
    max_off = std::max(max_off, r.offset);
    if (r.offset >= part.trim) {
      part.index.push_back(
          {r.offset, seg.id, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(len)});
      ++t.retained;
    }
    pos += len;
  }
  // Zeros after the last record are space the writer preallocated, not damage.
  const bool zero_tail = std::all_of(data + pos, data + size, [](char c) { return c == 0; });
  ::munmap(map, size);
  seg.data_end = pos;
  if (skipped > 0) {
    log(LogLevel::kError, "queue_records_skipped", {{"segment", seg.path}, {"records", skipped}});
  }
  if (pos < size && !zero_tail) {
    if (last) {
      // A crash mid-write leaves a partial record (or garbage) at the end of the active segment.
      // Nothing there was acknowledged: acknowledgement waits for fdatasync of the whole batch.
      if (::ftruncate(seg.fd, static_cast<off_t>(pos)) != 0 || ::fdatasync(seg.fd) != 0) {
        error = "embedded queue: cannot truncate " + seg.path + ": " + errno_text(errno);
        return false;
      }
      log(LogLevel::kWarn, "queue_torn_tail_truncated",
          {{"segment", seg.path}, {"bytes_dropped", size - pos}});
    } else {
      log(LogLevel::kError, "queue_segment_corrupt",
          {{"segment", seg.path}, {"position", pos}, {"bytes_ignored", size - pos}});
    }
  }
  return true;
}

bool QueueCore::open(std::string& error) {
  if (!validate(error)) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) {
    error = "embedded queue: cannot create directory " + dir_ + ": " + ec.message();
    return false;
  }
  const std::string lock_path = dir_ + "/LOCK";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) {
    error = "embedded queue: cannot open " + lock_path + ": " + errno_text(errno);
    return false;
  }
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    error = errno == EWOULDBLOCK
                ? "queue directory " + dir_ + " is in use by another process"
                : "embedded queue: cannot lock " + lock_path + ": " + errno_text(errno);
    return false;
  }
  if (!check_meta(error)) return false;
  if (!redo_rewrites(error)) return false;

  std::vector<std::pair<std::uint32_t, std::string>> segment_files;
  std::vector<std::string> offsets_files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.ends_with(".tmp")) {
      std::filesystem::remove(entry.path(), ec);  // an offsets write cut short by a crash
    } else if (name.starts_with("seg-") && name.ends_with(".log") && name.size() == 28 &&
               all_digits(std::string_view(name).substr(4, 20))) {
      segment_files.emplace_back(static_cast<std::uint32_t>(std::stoull(name.substr(4, 20))),
                                 entry.path().string());
    } else if (name.starts_with("group-") && name.ends_with(".offsets")) {
      offsets_files.push_back(entry.path().string());
    }
  }
  if (ec) {
    error = "embedded queue: cannot list " + dir_ + ": " + ec.message();
    return false;
  }
  std::lock_guard lock(mu_);  // nothing else runs yet; keeps the *_locked helpers honest
  for (const auto& path : offsets_files) {
    if (!load_offsets(path, error)) return false;
  }
  for (auto& [name, t] : topics_) {
    for (int p = 0; p < opts_.partitions; ++p) t->parts[p].trim = min_committed_locked(*t, p);
  }

  std::sort(segment_files.begin(), segment_files.end());
  for (std::size_t i = 0; i < segment_files.size(); ++i) {
    auto seg = std::make_shared<Segment>();
    seg->id = segment_files[i].first;
    seg->path = segment_files[i].second;
    seg->fd = ::open(seg->path.c_str(), O_RDWR | O_CLOEXEC);
    if (seg->fd < 0) {
      error = "embedded queue: cannot open " + seg->path + ": " + errno_text(errno);
      return false;
    }
    if (!scan_segment(*seg, i + 1 == segment_files.size(), error)) return false;
    segments_.push_back(std::move(seg));
  }
  for (auto& [name, t] : topics_) {
    for (int p = 0; p < opts_.partitions; ++p) {
      Partition& part = t->parts[p];
      for (GroupState* g : t->groups) part.end = std::max(part.end, g->committed[t.get()][p]);
      part.assign_next = part.end;
    }
  }

  if (segments_.empty()) {
    auto seg = std::make_shared<Segment>();
    seg->id = 0;
    seg->path = dir_ + "/" + segment_name(0);
    seg->fd = ::open(seg->path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (seg->fd < 0 || !fsync_dir(dir_)) {
      error = "embedded queue: cannot create " + seg->path + ": " + errno_text(errno);
      return false;
    }
    segments_.push_back(std::move(seg));
  }
  active_ = segments_.back();
  struct stat st {};
  if (::fstat(active_->fd, &st) != 0) {
    error = "embedded queue: cannot stat " + active_->path + ": " + errno_text(errno);
    return false;
  }
  active_size_ = active_->data_end;
  prealloc_end_ = static_cast<std::size_t>(st.st_size);

  std::int64_t records = 0;
  for (auto& [name, t] : topics_) records += t->retained;
  log(LogLevel::kInfo, "queue_opened",
      {{"dir", dir_},
       {"segments", segments_.size()},
       {"topics", topics_.size()},
       {"groups", groups_.size()},
       {"records_held", records}});

  opened_ = true;
  writer_ = std::thread([this] { writer_loop(); });
  flusher_ = std::thread([this] { flusher_loop(); });
  return true;
}

GroupBacklog QueueCore::backlog(const std::string& group) {
  GroupBacklog b;
  // The record at each waiting partition's committed offset: its header is read after the lock,
  // as a consumer reads a record (a segment is kept open by its pointer).
  std::vector<Found> waiting;
  {
    std::lock_guard lock(mu_);
    auto it = groups_.find(group);
    if (it == groups_.end()) return b;
    for (const auto& [t, committed] : it->second->committed) {
      for (int p = 0; p < opts_.partitions; ++p) {
        const Partition& part = t->parts[p];
        b.records += part.end - committed[p];
        b.position += committed[p];
        if (committed[p] >= part.end || part.index.empty()) continue;
        auto at =
            std::lower_bound(part.index.begin(), part.index.end(), committed[p],
                             [](const IndexEntry& e, std::int64_t o) { return e.offset < o; });
        if (at == part.index.end()) continue;
        if (auto seg = segment_locked(at->segment)) waiting.push_back({seg, *at, t, p});
      }
    }
  }
  for (const Found& f : waiting) {
    char header[kHeaderBytes];
    const ssize_t n =
        ::pread(f.segment->fd, header, sizeof header, static_cast<off_t>(f.entry.pos));
    const std::optional<std::int64_t> produced =
        n > 0 ? record_produced_ms(header, static_cast<std::size_t>(n)) : std::nullopt;
    // A record of the first format (or one unreadable) has no time: then the age is unknown.
    if (!produced) return GroupBacklog{b.records, b.position, std::nullopt};
    b.oldest_produced_ms = std::min(b.oldest_produced_ms.value_or(*produced), *produced);
  }
  return b;
}

std::vector<PartitionLag> QueueCore::lag(const EmbeddedConsumer& c) const {
  std::lock_guard lock(mu_);
  std::vector<PartitionLag> out;
  out.reserve(c.assigned_.size());
  for (const Assignment& a : c.assigned_) {
    out.push_back(
        {a.topic->name, a.partition, a.topic->parts[a.partition].end, (*a.committed)[a.partition]});
  }
  return out;
}

}  // namespace leadflow::embedded
