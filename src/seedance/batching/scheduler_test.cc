// Step-harness tests in the TensorRT-LLM style: the engine is stepped iteration by iteration
// with a fake executor; every step checks the block accounting (no leak, no double free).
#include "seedance/batching/scheduler.h"

#include <gtest/gtest.h>

#include "seedance/batching/replay.h"

namespace seedance::batching {
namespace {

class FakeExecutor : public Executor {
 public:
  StepCost Step(const BatchShape& s) const override {
    return StepCost{0.01 + 1e-5 * static_cast<double>(s.Tokens()), 0.5, 0.5};
  }
};

Request Req(std::uint32_t id, std::int32_t prompt, std::int32_t output, double t = 0,
            QosClass q = QosClass::kBurstable) {
  Request r;
  r.id = id;
  r.prompt = prompt;
  r.output = output;
  r.arrival_s = t;
  r.qos = q;
  return r;
}

struct Harness {
  Harness(const std::string& policy, std::size_t n, std::int64_t blocks, int block_size,
          PolicySettings settings = {}) : records(n) {
    settings.engine.kv_bytes_per_token = 1;
    settings.engine.block_size = block_size;
    settings.engine.kv_capacity_bytes = static_cast<double>(blocks * block_size);
    settings.engine.watermark = 0;
    settings.engine.max_context = 4096;
    auto s = MakeScheduler(policy, settings, &exec, &records);
    EXPECT_TRUE(s.has_value()) << s.error().ToString();
    sched = std::move(s).value();
  }
  // Runs one iteration; returns false when nothing ran.
  bool Step() {
    if (!sched->NextBatch(now, &batch)) return false;
    const StepCost c = exec.Step(batch.shape);
    now += c.seconds;
    sched->ApplyStep(batch, now, c);
    Status inv = sched->blocks().CheckInvariants();
    EXPECT_TRUE(inv.ok()) << inv.ToString();
    return true;
  }
  void RunToEnd() {
    for (int i = 0; i < 100000 && Step(); ++i) {
    }
    EXPECT_FALSE(sched->HasWork());
    EXPECT_EQ(sched->blocks().used_blocks(), 0) << "blocks leaked after all requests finished";
  }
  std::vector<std::uint32_t> ItemIds() const {
    std::vector<std::uint32_t> ids;
    for (const auto& it : batch.items) ids.push_back(it.seq);
    return ids;
  }
  FakeExecutor exec;
  std::vector<RequestRecord> records;
  std::unique_ptr<Scheduler> sched;
  Batch batch;
  double now = 0;
};

TEST(VllmStepTest, FcfsAdmissionUnderTokenBudgetWithChunkedPrefill) {
  PolicySettings s;
  s.vllm.max_num_batched_tokens = 512;
  Harness h("vllm", 3, 1000, 16, s);
  h.sched->Admit(Req(0, 300, 3), 0);
  h.sched->Admit(Req(1, 300, 3), 0);
  h.sched->Admit(Req(2, 100, 3), 0);
  ASSERT_TRUE(h.Step());
  EXPECT_EQ(h.ItemIds(), (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(h.batch.items[1].tokens, 212);  // chunked: the rest of the budget
  EXPECT_EQ(h.records[0].generated, 1);     // prefill done -> first token
  EXPECT_EQ(h.records[1].generated, 0);
  ASSERT_TRUE(h.Step());
  EXPECT_EQ(h.ItemIds(), (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(h.batch.items[1].tokens, 88);
  EXPECT_EQ(h.batch.shape.decodes, 1);
  h.RunToEnd();
  for (const auto& r : h.records) EXPECT_EQ(r.outcome, Outcome::kFinished);
  EXPECT_LE(h.records[0].finish_s, h.records[1].finish_s);  // FCFS
}

TEST(VllmStepTest, PreemptsLatestByRecomputeWhenBlocksRunOut) {
  Harness h("vllm", 2, 8, 16);
  h.sched->Admit(Req(0, 60, 20), 0);
  h.sched->Admit(Req(1, 60, 20), 0);
  ASSERT_TRUE(h.Step());
  EXPECT_EQ(h.sched->blocks().used_blocks(), 8);
  int steps = 1;
  while (h.sched->stats().preemptions == 0 && h.Step()) ++steps;
  EXPECT_EQ(h.sched->stats().recompute_preemptions, 1);
  EXPECT_EQ(h.records[1].preemptions, 1);  // the most recently admitted one
  EXPECT_EQ(h.records[0].preemptions, 0);
  EXPECT_EQ(h.sched->blocks().Held(1), 0);
  EXPECT_GT(h.sched->stats().recomputed_tokens, 60);
  h.RunToEnd();
  EXPECT_EQ(h.records[0].generated, 20);
  EXPECT_EQ(h.records[1].generated, 20);
  EXPECT_LT(h.records[0].finish_s, h.records[1].finish_s);
}

TEST(VllmStepTest, SwapPreemptionKeepsComputedTokens) {
  PolicySettings s;
  s.vllm.preemption = PreemptionMode::kSwap;
  Harness h("vllm", 2, 8, 16, s);
  h.sched->Admit(Req(0, 60, 20), 0);
  h.sched->Admit(Req(1, 60, 20), 0);
  h.RunToEnd();
  EXPECT_EQ(h.sched->stats().swap_preemptions, 1);
  EXPECT_EQ(h.sched->stats().recomputed_tokens, 0);
}

TEST(StepTest, RequestsThatCanNeverFitAreRejectedWithAReason) {
  Harness h("vllm", 2, 8, 16);
  h.sched->Admit(Req(0, 4000, 200), 0);  // > 4096 context
  h.sched->Admit(Req(1, 200, 10), 0);    // 210 tokens > 8 x 16 cache
  EXPECT_EQ(h.records[0].outcome, Outcome::kRejected);
  EXPECT_EQ(h.records[0].reason, RejectReason::kExceedsContext);
  EXPECT_EQ(h.records[1].reason, RejectReason::kExceedsKvCache);
  EXPECT_FALSE(h.sched->HasWork());
}

TEST(SeedanceStepTest, GuaranteedPreemptsBestEffortAndBestEffortStillFinishes) {
  Harness h("seedance-kvtiers", 2, 10, 16);
  h.sched->Admit(Req(0, 120, 30, 0, QosClass::kBestEffort), 0);
  ASSERT_TRUE(h.Step());
  EXPECT_EQ(h.sched->blocks().Held(0), 8);
  h.sched->Admit(Req(1, 100, 5, h.now, QosClass::kGuaranteed), h.now);
  ASSERT_TRUE(h.Step());
  // The guaranteed request runs now; the best-effort one was paused with its KV compressed.
  EXPECT_EQ(h.ItemIds(), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(h.records[0].preemptions, 1);
  EXPECT_EQ(h.sched->stats().kv_compressions, 1);
  h.RunToEnd();
  EXPECT_LT(h.records[1].finish_s, h.records[0].finish_s);
  EXPECT_EQ(h.records[0].outcome, Outcome::kFinished);
  EXPECT_TRUE(h.records[0].lowbit_kv);
}

TEST(SeedanceStepTest, LosslessSeedanceRecomputesInsteadOfCompressing) {
  Harness h("seedance", 2, 10, 16);
  h.sched->Admit(Req(0, 120, 30, 0, QosClass::kBestEffort), 0);
  ASSERT_TRUE(h.Step());
  h.sched->Admit(Req(1, 100, 5, h.now, QosClass::kGuaranteed), h.now);
  ASSERT_TRUE(h.Step());
  EXPECT_EQ(h.ItemIds(), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(h.records[0].preemptions, 1);
  EXPECT_EQ(h.sched->stats().kv_compressions, 0);
  EXPECT_EQ(h.sched->stats().recompute_preemptions, 1);
  h.RunToEnd();
  EXPECT_EQ(h.records[0].outcome, Outcome::kFinished);
  EXPECT_FALSE(h.records[0].lowbit_kv);
}

TEST(SeedanceStepTest, ShortPromptsFirstWithinAClass) {
  Harness h("seedance", 3, 1000, 64);
  h.sched->Admit(Req(0, 3000, 2), 0);
  h.sched->Admit(Req(1, 50, 2), 0);
  h.sched->Admit(Req(2, 400, 2), 0);
  ASSERT_TRUE(h.Step());
  ASSERT_GE(h.batch.items.size(), 2u);
  EXPECT_EQ(h.batch.items[0].seq, 1u);
  EXPECT_EQ(h.batch.items[1].seq, 2u);
  h.RunToEnd();
}

TEST(StaticStepTest, PaddingToTheLongestAndBuckets) {
  // S5.5 seed example: prompts 16, 48, 7, 128 padded to 128: 313 of 512 slots are padding.
  for (const char* policy : {"static", "static-bucketed"}) {
    Harness h(policy, 4, 1000, 64);
    const std::int32_t prompts[] = {16, 48, 7, 128};
    for (std::uint32_t i = 0; i < 4; ++i) h.sched->Admit(Req(i, prompts[i], 1), 0);
    h.RunToEnd();
    const auto st = h.sched->stats();
    EXPECT_EQ(st.useful_tokens, 199);
    EXPECT_EQ(st.padded_tokens, std::string(policy) == "static" ? 313 : 9) << policy;
  }
}

TEST(StaticStepTest, DecodesRunToTheLongestOutput) {
  Harness h("static", 2, 1000, 64);
  h.sched->Admit(Req(0, 10, 2), 0);
  h.sched->Admit(Req(1, 10, 5), 0);
  int steps = 0;
  while (h.Step()) ++steps;
  EXPECT_EQ(steps, 5);  // one prefill + 4 decodes
  EXPECT_EQ(h.sched->stats().padded_tokens, 3);  // request 0 idles for 3 decode steps
  EXPECT_EQ(h.sched->blocks().used_blocks(), 0);
}

TEST(TritonStepTest, PreferredSizeDelayTimeoutQueueSizeAndPriority) {
  PolicySettings s;
  s.triton.max_batch = 4;
  s.triton.preferred_batch_size = {4};
  s.triton.max_queue_delay_microseconds = 100000;
  {
    Harness h("triton", 4, 1000, 64, s);
    for (std::uint32_t i = 0; i < 3; ++i) h.sched->Admit(Req(i, 10, 2), 0);
    EXPECT_FALSE(h.Step());                           // waits for a preferred batch
    EXPECT_DOUBLE_EQ(h.sched->WakeupTime(0), 0.1);
    h.sched->Admit(Req(3, 10, 2, 0.05), 0.05);
    h.now = 0.05;
    ASSERT_TRUE(h.Step());                            // preferred size reached
    EXPECT_EQ(h.batch.items.size(), 4u);
    h.RunToEnd();
  }
  {
    Harness h("triton", 2, 1000, 64, s);
    h.sched->Admit(Req(0, 10, 2), 0);
    h.now = 0.1;
    ASSERT_TRUE(h.Step());                            // delay expired: partial batch
    EXPECT_EQ(h.batch.items.size(), 1u);
  }
  s.triton.default_timeout_microseconds = 50000;
  s.triton.max_queue_size = 2;
  s.triton.preferred_batch_size = {1};
  s.triton.max_batch = 1;
  {
    Harness h("triton", 4, 1000, 64, s);
    h.sched->Admit(Req(0, 10, 2, 0, QosClass::kBestEffort), 0);
    h.sched->Admit(Req(1, 10, 2, 0, QosClass::kGuaranteed), 0);
    h.sched->Admit(Req(2, 10, 2, 0), 0);
    EXPECT_EQ(h.records[2].reason, RejectReason::kQueueFull);
    ASSERT_TRUE(h.Step());
    EXPECT_EQ(h.batch.items[0].seq, 1u);             // priority level 1 first
    ASSERT_TRUE(h.Step());                            // its decode
    h.now = 1.0;                                      // request 0 waited past its timeout
    EXPECT_FALSE(h.Step());
    EXPECT_EQ(h.records[0].reason, RejectReason::kQueueTimeout);
    h.RunToEnd();
  }
}

TEST(ReplayTest, DeterministicAndCountsEveryRequest) {
  Trace t;
  for (std::uint32_t i = 0; i < 200; ++i) {
    t.requests.push_back(Req(i, 50 + static_cast<std::int32_t>(i * 37 % 900),
                             1 + static_cast<std::int32_t>(i * 13 % 200), i * 0.05));
  }
  t.requests[7].prompt = 5000;  // can never fit
  for (const auto& policy : PolicyNames()) {
    PolicyResult r[2];
    for (auto& out : r) {
      Harness h(policy, t.requests.size(), 400, 16);
      FakeExecutor ex;
      auto res = Replay(t, *h.sched, ex, h.records, ReplayOptions{});
      ASSERT_TRUE(res.has_value()) << res.error().ToString();
      out = *res;
    }
    EXPECT_EQ(r[0].finished + r[0].rejected_context + r[0].rejected_kv + r[0].rejected_queue, 200)
        << policy;
    EXPECT_EQ(r[0].rejected_context, 1) << policy;
    EXPECT_EQ(r[0].makespan_s, r[1].makespan_s) << policy;
    EXPECT_EQ(r[0].ttft_p99_s, r[1].ttft_p99_s) << policy;
  }
}

TEST(ReplayTest, StepNoiseIsSeededAndChangesTheTiming) {
  Trace t;
  for (std::uint32_t i = 0; i < 100; ++i) t.requests.push_back(Req(i, 200, 50, i * 0.05));
  auto run = [&](StepNoise noise) {
    Harness h("vllm", t.requests.size(), 400, 16);
    FakeExecutor ex;
    ReplayOptions o;
    o.noise = noise;
    return Replay(t, *h.sched, ex, h.records, o).value();
  };
  StepNoise n{0.05, 0.01, 2.0, 7};
  const PolicyResult quiet = run(StepNoise{}), a = run(n), b = run(n);
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_NE(a.makespan_s, quiet.makespan_s);
  n.seed = 8;
  EXPECT_NE(run(n).makespan_s, a.makespan_s);
}

TEST(SchedulerFactoryTest, RejectsUnknownPolicyAndBadKnobs) {
  std::vector<RequestRecord> rec(1);
  PolicySettings s;
  s.engine.kv_bytes_per_token = 1;
  s.engine.kv_capacity_bytes = 1024;
  EXPECT_EQ(MakeScheduler("orca", s, nullptr, &rec).error().code(), StatusCode::kInvalidArgument);
  s.triton.preferred_batch_size = {64};
  EXPECT_FALSE(MakeScheduler("triton", s, nullptr, &rec).has_value());
}

}  // namespace
}  // namespace seedance::batching
