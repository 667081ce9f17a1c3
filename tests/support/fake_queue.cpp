#include "fake_queue.hpp"

#include <algorithm>
#include <atomic>
#include <set>

namespace leadflow::testing {

using TopicPartition = std::pair<std::string, int>;

struct FakeQueue::Group {
  std::string name;
  std::vector<Consumer*> members;                    // in join order
  std::map<TopicPartition, std::int64_t> committed;  // one entry per partition of its topics
  std::map<TopicPartition, Consumer*> owner;         // who holds a partition now
  int rebalance_countdown = -1;                      // records to hand out before a rebalance
};

class FakeQueue::Producer final : public QueueProducer {
 public:
  explicit Producer(FakeQueue& q) : q_(q) {}
  ProduceStatus produce(std::string_view topic, std::string_view key, std::string_view payload,
                        std::chrono::milliseconds) override {
    return q_.append(topic, key, payload);
  }
  ProduceStatus send(std::string_view topic, std::string_view key,
                     std::string_view payload) override {
    return q_.append(topic, key, payload);
  }
  bool flush(std::chrono::milliseconds) override {
    return true;
  }  // every append is at once durable
  bool healthy() override {
    std::lock_guard lock(q_.mu_);
    return q_.available_;
  }

 private:
  FakeQueue& q_;
};

class FakeQueue::Consumer final : public QueueConsumer {
 public:
  Consumer(FakeQueue& q, Group& g, std::vector<std::string> topics)
      : q_(q), group_(g), topics_(std::move(topics)) {}
  ~Consumer() override { close(); }
  std::optional<QueueRecord> poll(std::chrono::milliseconds timeout) override {
    return q_.poll(*this, timeout);
  }
  void commit(std::string_view topic, int partition, std::int64_t next_offset) override {
    q_.commit(*this, topic, partition, next_offset);
  }
  void close() override { q_.close(*this); }
  std::uint64_t generation() const override { return generation_.load(); }
  void set_revoke_handler(std::function<void()> handler) override {
    std::lock_guard lock(q_.mu_);
    handler_ = std::move(handler);
  }

 private:
  friend class FakeQueue;
  FakeQueue& q_;
  Group& group_;
  const std::vector<std::string> topics_;
  // Guarded by q_.mu_.
  std::vector<TopicPartition> target_;                // what the group gives it
  std::map<TopicPartition, std::int64_t> positions_;  // what it holds, and the next offset there
  std::size_t next_ = 0;                              // round-robin over positions_
  bool revoke_pending_ = false;
  bool closed_ = false;
  std::function<void()> handler_;
  std::atomic<std::uint64_t> generation_{0};
};

FakeQueue::FakeQueue(int partitions)
    : partitions_(partitions), producer_(std::make_unique<Producer>(*this)) {}

FakeQueue::~FakeQueue() = default;

QueueProducer& FakeQueue::producer() { return *producer_; }

FakeQueue::Topic& FakeQueue::topic_locked(const std::string& name) {
  auto it = topics_.find(name);
  if (it == topics_.end()) {
    it = topics_.emplace(name, Topic{}).first;
    it->second.partitions.resize(static_cast<std::size_t>(partitions_));
  }
  return it->second;
}

int FakeQueue::partition_of(std::string_view key) const {
  return static_cast<int>(std::hash<std::string_view>{}(key) %
                          static_cast<std::size_t>(partitions_));
}

ProduceStatus FakeQueue::append(std::string_view topic, std::string_view key,
                                std::string_view payload) {
  {
    std::lock_guard lock(mu_);
    if (!available_ || stopping_) return ProduceStatus::kUnavailable;
    Topic& t = topic_locked(std::string(topic));
    QueueRecord r;
    r.topic = std::string(topic);
    r.partition = partition_of(key);
    auto& part = t.partitions[static_cast<std::size_t>(r.partition)];
    r.offset = static_cast<std::int64_t>(part.size());
    r.key = std::string(key);
    r.payload = std::string(payload);
    part.push_back(r);
    t.produced_ms.resize(t.partitions.size());
    auto& stamps = t.produced_ms[static_cast<std::size_t>(r.partition)];
    stamps.resize(part.size() - 1);
    stamps.push_back(
        clock_ ? std::optional<std::int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 clock_->now().time_since_epoch())
                                                 .count())
               : std::nullopt);
    t.produced.push_back(std::move(r));
  }
  records_cv_.notify_all();
  return ProduceStatus::kOk;
}

void FakeQueue::assign_locked(Group& g) {
  std::set<std::string> topics;
  for (Consumer* m : g.members) {
    m->target_.clear();
    topics.insert(m->topics_.begin(), m->topics_.end());
  }
  for (const std::string& t : topics) {
    std::vector<Consumer*> readers;
    for (Consumer* m : g.members)
      if (std::find(m->topics_.begin(), m->topics_.end(), t) != m->topics_.end())
        readers.push_back(m);
    for (int p = 0; p < partitions_; ++p)
      readers[static_cast<std::size_t>(p) % readers.size()]->target_.emplace_back(t, p);
  }
}

std::unique_ptr<QueueConsumer> FakeQueue::make_consumer(const std::string& group,
                                                        const std::vector<std::string>& topics) {
  std::lock_guard lock(mu_);
  auto& slot = groups_[group];
  if (!slot) {
    slot = std::make_unique<Group>();
    slot->name = group;
  }
  Group& g = *slot;
  for (const std::string& t : topics) {
    topic_locked(t);
    for (int p = 0; p < partitions_; ++p) g.committed.try_emplace({t, p}, 0);
  }
  auto consumer = std::make_unique<Consumer>(*this, g, topics);
  for (Consumer* m : g.members) m->revoke_pending_ = true;  // a member joins: eager rebalance
  g.members.push_back(consumer.get());
  assign_locked(g);
  return consumer;
}

std::optional<QueueRecord> FakeQueue::poll(Consumer& c, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Group& g = c.group_;
  std::unique_lock lock(mu_);
  for (;;) {
    if (stopping_ || c.closed_) return std::nullopt;
    if (c.revoke_pending_) {
      c.revoke_pending_ = false;
      ++revoking_;
      auto handler = c.handler_;
      lock.unlock();
      if (handler) handler();
      lock.lock();
      --revoking_;
      Revoke done{g.name, {}};
      for (const auto& [tp, next] : c.positions_) done.committed[tp] = g.committed[tp];
      revokes_.push_back(std::move(done));
      for (const auto& [tp, next] : c.positions_) g.owner.erase(tp);
      c.positions_.clear();
      c.next_ = 0;
      ++c.generation_;
      records_cv_.notify_all();  // other members may take what it gave up
    }
    for (const TopicPartition& tp : c.target_) {
      if (g.owner.count(tp)) continue;
      g.owner[tp] = &c;
      c.positions_[tp] = g.committed[tp];  // a new owner starts at the committed offset
    }
    const std::size_t n = c.positions_.size();
    for (std::size_t i = 0; i < n; ++i) {
      auto it = std::next(c.positions_.begin(), static_cast<std::ptrdiff_t>((c.next_ + i) % n));
      const auto& part = topics_.find(it->first.first)
                             ->second.partitions[static_cast<std::size_t>(it->first.second)];
      if (it->second >= static_cast<std::int64_t>(part.size())) continue;
      QueueRecord r = part[static_cast<std::size_t>(it->second)];
      ++it->second;
      c.next_ = (c.next_ + i + 1) % n;
      r.generation = c.generation_.load();
      if (g.rebalance_countdown > 0 && --g.rebalance_countdown == 0) {
        g.rebalance_countdown = -1;
        for (Consumer* m : g.members) m->revoke_pending_ = true;
      }
      return r;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    records_cv_.wait_until(lock, deadline);
  }
}

void FakeQueue::commit(Consumer& c, std::string_view topic, int partition, std::int64_t next) {
  std::lock_guard lock(mu_);
  auto it = c.group_.committed.find({std::string(topic), partition});
  if (it == c.group_.committed.end()) return;  // the group does not read it
  const auto& part = topics_.find(topic)->second.partitions[static_cast<std::size_t>(partition)];
  it->second = std::max(it->second, std::min(next, static_cast<std::int64_t>(part.size())));
}

void FakeQueue::close(Consumer& c) {
  {
    std::lock_guard lock(mu_);
    if (c.closed_) return;
    c.closed_ = true;
    Group& g = c.group_;
    for (const auto& [tp, next] : c.positions_) g.owner.erase(tp);
    c.positions_.clear();
    std::erase(g.members, &c);
    for (Consumer* m : g.members) m->revoke_pending_ = true;
    assign_locked(g);
  }
  records_cv_.notify_all();
}

std::optional<GroupBacklog> FakeQueue::group_backlog(const std::string& group) {
  std::lock_guard lock(mu_);
  if (!available_) return std::nullopt;
  GroupBacklog b;
  auto it = groups_.find(group);
  if (it == groups_.end()) return b;
  for (const auto& [tp, committed] : it->second->committed) {
    const Topic& t = topics_.find(tp.first)->second;
    const auto end =
        static_cast<std::int64_t>(t.partitions[static_cast<std::size_t>(tp.second)].size());
    b.records += end - committed;
    b.position += committed;
    if (committed < end && static_cast<std::size_t>(tp.second) < t.produced_ms.size()) {
      const auto& stamps = t.produced_ms[static_cast<std::size_t>(tp.second)];
      const auto at = static_cast<std::size_t>(committed);
      if (at < stamps.size() && stamps[at])
        b.oldest_produced_ms = std::min(b.oldest_produced_ms.value_or(*stamps[at]), *stamps[at]);
    }
  }
  return b;
}

void FakeQueue::set_clock(const Clock* clock) {
  std::lock_guard lock(mu_);
  clock_ = clock;
}

void FakeQueue::shutdown() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  records_cv_.notify_all();
}

void FakeQueue::rebalance(const std::string& group) {
  {
    std::lock_guard lock(mu_);
    auto it = groups_.find(group);
    if (it == groups_.end()) return;
    for (Consumer* m : it->second->members) m->revoke_pending_ = true;
  }
  records_cv_.notify_all();
}

void FakeQueue::rebalance_after(const std::string& group, int records) {
  std::lock_guard lock(mu_);
  auto& slot = groups_[group];
  if (!slot) {
    slot = std::make_unique<Group>();
    slot->name = group;
  }
  slot->rebalance_countdown = records;
}

void FakeQueue::set_available(bool available) {
  std::lock_guard lock(mu_);
  available_ = available;
}

std::vector<QueueRecord> FakeQueue::records(const std::string& topic) const {
  std::lock_guard lock(mu_);
  auto it = topics_.find(topic);
  return it == topics_.end() ? std::vector<QueueRecord>{} : it->second.produced;
}

std::int64_t FakeQueue::committed(const std::string& group, const std::string& topic,
                                  int partition) const {
  std::lock_guard lock(mu_);
  auto g = groups_.find(group);
  if (g == groups_.end()) return 0;
  auto it = g->second->committed.find({topic, partition});
  return it == g->second->committed.end() ? 0 : it->second;
}

std::vector<FakeQueue::Revoke> FakeQueue::revokes() const {
  std::lock_guard lock(mu_);
  return revokes_;
}

int FakeQueue::revoking() const {
  std::lock_guard lock(mu_);
  return revoking_;
}

}  // namespace leadflow::testing
