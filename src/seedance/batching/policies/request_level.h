#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "seedance/batching/scheduler.h"

namespace seedance::batching::internal {

// Request-level batching (static and Triton): a batch is formed when the GPU is free and runs
// to completion: one prefill of every member padded to the longest prompt, then decode steps
// until the longest output is done (finished members stay as padding). KV is reserved up
// front for longest prompt + longest output of the batch per member.
class RequestLevelScheduler : public Scheduler {
 public:
  RequestLevelScheduler(const EngineConfig& engine, int max_batch,
                        std::vector<RequestRecord>* records);

  void Admit(const Request& r, double now) final;
  bool NextBatch(double now, Batch* batch) final;
  void ApplyStep(const Batch& batch, double end_s, const StepCost& cost) final;
  bool HasWork() const final { return active_ || Queued() > 0; }
  const BlockManager& blocks() const final { return blocks_; }
  SchedulerStats stats() const final { return stats_; }

 protected:
  // Queues an admissible request. May reject it (record + reason) instead.
  virtual void Enqueue(const Request& r, double now) = 0;
  // Returns up to `max` queued request ids, in the order they should join, removing them
  // from the queue; empty: do not start a batch now.
  virtual std::vector<std::uint32_t> Take(double now, int max) = 0;
  // Puts back ids Take returned but that did not fit (front of their queue, same order).
  virtual void PutBack(const std::vector<std::uint32_t>& ids) = 0;
  virtual std::size_t Queued() const = 0;

  void Reject(std::uint32_t id, RejectReason reason) {
    (*records_)[id].outcome = Outcome::kRejected;
    (*records_)[id].reason = reason;
  }
  const Request& request(std::uint32_t id) const { return requests_[id]; }
  int max_batch() const { return max_batch_; }

 private:
  EngineConfig engine_;
  int max_batch_;
  std::vector<RequestRecord>* records_;
  std::vector<Request> requests_;
  BlockManager blocks_;
  SchedulerStats stats_;
  bool active_ = false;
  std::vector<std::uint32_t> members_;
  std::int32_t max_prompt_ = 0;
  std::int32_t max_output_ = 0;
  std::int32_t step_ = 0;
};

std::unique_ptr<Scheduler> MakeStaticScheduler(const EngineConfig& e, const StaticConfig& c,
                                               std::vector<RequestRecord>* records);
std::unique_ptr<Scheduler> MakeTritonScheduler(const EngineConfig& e, const TritonConfig& c,
                                               std::vector<RequestRecord>* records);
std::unique_ptr<Scheduler> MakeContinuousScheduler(std::string_view name, const EngineConfig& e,
                                                   const ContinuousConfig& c,
                                                   const Executor* executor,
                                                   std::vector<RequestRecord>* records);

// Blocks for a policy's engine config.
BlockManager MakeBlockManager(const EngineConfig& e);

}  // namespace seedance::batching::internal
