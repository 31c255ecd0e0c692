#include "seedance/batching/policies/request_level.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <string_view>

namespace seedance::batching::internal {

BlockManager MakeBlockManager(const EngineConfig& e) {
  SEEDANCE_CHECK(e.block_size > 0 && e.kv_bytes_per_token > 0);
  const auto blocks = static_cast<std::int64_t>(
      std::floor(std::max(0.0, e.kv_capacity_bytes) / (e.block_size * e.kv_bytes_per_token)));
  return BlockManager(blocks, e.block_size, e.watermark);
}

RequestLevelScheduler::RequestLevelScheduler(const EngineConfig& engine, int max_batch,
                                             std::vector<RequestRecord>* records)
    : engine_(engine),
      max_batch_(max_batch),
      records_(records),
      requests_(records->size()),
      blocks_(MakeBlockManager(engine)) {}

void RequestLevelScheduler::Admit(const Request& r, double now) {
  SEEDANCE_CHECK(r.id < requests_.size());
  requests_[r.id] = r;
  const std::int64_t tokens = std::int64_t{r.prompt} + r.output;
  if (tokens > engine_.max_context) return Reject(r.id, RejectReason::kExceedsContext);
  if (blocks_.BlocksFor(tokens) > blocks_.total_blocks()) {
    return Reject(r.id, RejectReason::kExceedsKvCache);
  }
  Enqueue(r, now);
}

bool RequestLevelScheduler::NextBatch(double now, Batch* batch) {
  batch->Clear();
  if (!active_) {
    std::vector<std::uint32_t> ids = Take(now, max_batch_);
    if (ids.empty()) return false;
    // Keep the longest prefix whose padded reservation fits the cache.
    std::size_t n = 0;
    std::int32_t mp = 0, mo = 0;
    for (; n < ids.size(); ++n) {
      const Request& r = requests_[ids[n]];
      const std::int32_t p = std::max(mp, r.prompt), o = std::max(mo, r.output);
      if (blocks_.BlocksFor(std::int64_t{p} + o) * static_cast<std::int64_t>(n + 1) >
          blocks_.free_blocks()) {
        break;
      }
      mp = p;
      mo = o;
    }
    SEEDANCE_CHECK(n > 0) << "a lone request must fit an empty cache (checked at admission)";
    PutBack(std::vector<std::uint32_t>(ids.begin() + static_cast<std::ptrdiff_t>(n), ids.end()));
    members_.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n));
    max_prompt_ = mp;
    max_output_ = mo;
    step_ = 0;
    active_ = true;
    for (std::uint32_t id : members_) {
      SEEDANCE_CHECK(blocks_.EnsureTokens(id, std::int64_t{mp} + mo));
    }
  }
  const auto b = static_cast<std::int64_t>(members_.size());
  if (step_ == 0) {
    std::int64_t useful = 0;
    for (std::uint32_t id : members_) {
      batch->shape.prefills.push_back(PrefillChunk{max_prompt_, 0});
      batch->items.push_back(ScheduledItem{id, requests_[id].prompt});
      useful += requests_[id].prompt;
    }
    batch->useful_tokens = useful;
    batch->padded_tokens = b * max_prompt_ - useful;
  } else {
    batch->shape.decodes = static_cast<std::int32_t>(b);
    batch->shape.decode_kv_sum = b * (max_prompt_ + step_);
    std::int64_t useful = 0;
    for (std::uint32_t id : members_) {
      if ((*records_)[id].generated < requests_[id].output) {
        batch->items.push_back(ScheduledItem{id, 1});
        ++useful;
      }
    }
    batch->useful_tokens = useful;
    batch->padded_tokens = b - useful;
  }
  return true;
}

void RequestLevelScheduler::ApplyStep(const Batch& batch, double end_s, const StepCost& cost) {
  (void)cost;
  SEEDANCE_CHECK(active_);
  stats_.useful_tokens += batch.useful_tokens;
  stats_.padded_tokens += batch.padded_tokens;
  for (const auto& item : batch.items) {
    RequestRecord& rec = (*records_)[item.seq];
    ++rec.generated;
    if (rec.generated == 1) rec.first_token_s = end_s;
    if (rec.generated == requests_[item.seq].output) {
      rec.finish_s = end_s;
      rec.outcome = Outcome::kFinished;
    }
  }
  ++step_;
  if (step_ >= max_output_) {
    for (std::uint32_t id : members_) blocks_.Free(id);
    members_.clear();
    active_ = false;
  }
}

namespace {

// Static batching: FIFO, or (bucketed) the bucket of the oldest request first.
class StaticScheduler final : public RequestLevelScheduler {
 public:
  StaticScheduler(const EngineConfig& e, const StaticConfig& c, std::vector<RequestRecord>* r)
      : RequestLevelScheduler(e, c.max_batch, r), bucketed_(c.bucketed) {}
  std::string_view name() const override { return bucketed_ ? "static-bucketed" : "static"; }

 protected:
  static std::size_t Bucket(std::int32_t prompt) {
    // [0,32) -> 0, [32,64) -> 1, [64,128) -> 2, ...
    const auto p = static_cast<std::uint32_t>(prompt);
    return p < 32 ? 0 : static_cast<std::size_t>(std::bit_width(p) - 5);
  }
  void Enqueue(const Request& r, double) override {
    const std::size_t b = bucketed_ ? Bucket(r.prompt) : 0;
    if (b >= queues_.size()) queues_.resize(b + 1);
    queues_[b].push_back(r.id);
    ++queued_;
  }
  std::vector<std::uint32_t> Take(double, int max) override {
    std::vector<std::uint32_t> ids;
    std::size_t best = queues_.size();
    for (std::size_t b = 0; b < queues_.size(); ++b) {
      if (!queues_[b].empty() && (best == queues_.size() || queues_[b].front() < queues_[best].front())) {
        best = b;
      }
    }
    if (best == queues_.size()) return ids;
    auto& q = queues_[best];
    while (!q.empty() && static_cast<int>(ids.size()) < max) {
      ids.push_back(q.front());
      q.pop_front();
    }
    last_bucket_ = best;
    queued_ -= ids.size();
    return ids;
  }
  void PutBack(const std::vector<std::uint32_t>& ids) override {
    for (auto it = ids.rbegin(); it != ids.rend(); ++it) queues_[last_bucket_].push_front(*it);
    queued_ += ids.size();
  }
  std::size_t Queued() const override { return queued_; }

 private:
  bool bucketed_;
  std::vector<std::deque<std::uint32_t>> queues_;
  std::size_t queued_ = 0;
  std::size_t last_bucket_ = 0;
};

// Triton's dynamic batcher: priority levels (FIFO within a level), preferred batch sizes,
// max queue delay, queue timeouts (REJECT) and max queue size.
class TritonScheduler final : public RequestLevelScheduler {
 public:
  TritonScheduler(const EngineConfig& e, const TritonConfig& c, std::vector<RequestRecord>* r)
      : RequestLevelScheduler(e, c.max_batch, r),
        cfg_(c),
        levels_(static_cast<std::size_t>(std::max(1, c.priority_levels))) {
    std::sort(cfg_.preferred_batch_size.begin(), cfg_.preferred_batch_size.end());
  }
  std::string_view name() const override { return "triton"; }

  double WakeupTime(double now) const override {
    double t = std::numeric_limits<double>::infinity();
    const double oldest = OldestArrival();
    if (std::isinf(oldest)) return t;
    t = oldest + static_cast<double>(cfg_.max_queue_delay_microseconds) * 1e-6;
    if (cfg_.default_timeout_microseconds > 0) {
      t = std::min(t, oldest + static_cast<double>(cfg_.default_timeout_microseconds) * 1e-6);
    }
    return std::max(t, now);
  }

 protected:
  void Enqueue(const Request& r, double now) override {
    if (cfg_.max_queue_size > 0 && static_cast<std::int64_t>(queued_) >= cfg_.max_queue_size) {
      return Reject(r.id, RejectReason::kQueueFull);
    }
    const std::size_t level = std::min(levels_.size() - 1, static_cast<std::size_t>(r.qos));
    levels_[level].push_back(Entry{r.id, now});
    ++queued_;
  }
  std::vector<std::uint32_t> Take(double now, int max) override {
    ExpireTimeouts(now);
    std::vector<std::uint32_t> ids;
    if (queued_ == 0) return ids;
    const int avail = static_cast<int>(std::min<std::size_t>(queued_, static_cast<std::size_t>(max)));
    int size = 0;
    if (avail >= max) size = max;
    for (int p : cfg_.preferred_batch_size) {
      if (p <= avail) size = std::max(size, p);
    }
    const double waited = now - OldestArrival();
    if (size == 0 && waited + 1e-12 >= static_cast<double>(cfg_.max_queue_delay_microseconds) * 1e-6) {
      size = avail;
    }
    for (auto& q : levels_) {
      while (!q.empty() && static_cast<int>(ids.size()) < size) {
        ids.push_back(q.front().id);
        taken_level_.push_back(static_cast<std::size_t>(&q - levels_.data()));
        taken_time_.push_back(q.front().enqueued_s);
        q.pop_front();
      }
    }
    queued_ -= ids.size();
    return ids;
  }
  void PutBack(const std::vector<std::uint32_t>& ids) override {
    const std::size_t first = taken_level_.size() - ids.size();
    for (std::size_t i = ids.size(); i-- > 0;) {
      levels_[taken_level_[first + i]].push_front(Entry{ids[i], taken_time_[first + i]});
    }
    queued_ += ids.size();
    taken_level_.clear();
    taken_time_.clear();
  }
  std::size_t Queued() const override { return queued_; }

 private:
  struct Entry {
    std::uint32_t id;
    double enqueued_s;
  };
  double OldestArrival() const {
    double t = std::numeric_limits<double>::infinity();
    for (const auto& q : levels_) {
      if (!q.empty()) t = std::min(t, q.front().enqueued_s);
    }
    return t;
  }
  void ExpireTimeouts(double now) {
    taken_level_.clear();
    taken_time_.clear();
    if (cfg_.default_timeout_microseconds <= 0) return;
    const double limit = static_cast<double>(cfg_.default_timeout_microseconds) * 1e-6;
    for (auto& q : levels_) {
      std::deque<Entry> keep;
      for (const Entry& e : q) {
        if (now - e.enqueued_s > limit) {
          Reject(e.id, RejectReason::kQueueTimeout);
          --queued_;
        } else {
          keep.push_back(e);
        }
      }
      q.swap(keep);
    }
  }

  TritonConfig cfg_;
  std::vector<std::deque<Entry>> levels_;
  std::size_t queued_ = 0;
  std::vector<std::size_t> taken_level_;
  std::vector<double> taken_time_;
};

}  // namespace

std::unique_ptr<Scheduler> MakeStaticScheduler(const EngineConfig& e, const StaticConfig& c,
                                               std::vector<RequestRecord>* records) {
  return std::make_unique<StaticScheduler>(e, c, records);
}

std::unique_ptr<Scheduler> MakeTritonScheduler(const EngineConfig& e, const TritonConfig& c,
                                               std::vector<RequestRecord>* records) {
  return std::make_unique<TritonScheduler>(e, c, records);
}

}  // namespace seedance::batching::internal
