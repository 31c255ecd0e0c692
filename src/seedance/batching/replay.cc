#include "seedance/batching/replay.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "seedance/core/rng.h"

namespace seedance::batching {

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const auto k = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

Result<PolicyResult> Replay(const Trace& trace, Scheduler& scheduler, const Executor& executor,
                            std::vector<RequestRecord>& records, const ReplayOptions& options) {
  const auto& reqs = trace.requests;
  SEEDANCE_CHECK(records.size() == reqs.size());
  PolicyResult out;
  out.name = std::string(scheduler.name());
  out.requests = static_cast<std::int64_t>(reqs.size());
  const double total_blocks = static_cast<double>(std::max<std::int64_t>(1, scheduler.blocks().total_blocks()));
  double now = reqs.empty() ? 0 : reqs.front().arrival_s;
  const double start = now;
  std::size_t next = 0;
  Batch batch;
  double kv_time = 0, busy = 0;
  const StepNoise& noise = options.noise;
  Rng rng(noise.seed);
  for (;;) {
    while (next < reqs.size() && reqs[next].arrival_s <= now) {
      scheduler.Admit(reqs[next], reqs[next].arrival_s);
      ++next;
    }
    if (scheduler.NextBatch(now, &batch)) {
      StepCost cost = executor.Step(batch.shape);
      if (noise.enabled()) {
        double f = std::exp(noise.sigma * rng.Normal() - 0.5 * noise.sigma * noise.sigma);
        if (rng.Bernoulli(noise.slow_prob)) f *= noise.slow_factor;
        cost.seconds *= f;
      }
      const double used = static_cast<double>(scheduler.blocks().used_blocks()) / total_blocks;
      kv_time += used * cost.seconds;
      busy += cost.seconds;
      out.kv_use_peak = std::max(out.kv_use_peak, used);
      now += cost.seconds;
      scheduler.ApplyStep(batch, now, cost);
      ++out.steps;
      continue;
    }
    double t = std::min(next < reqs.size() ? reqs[next].arrival_s : HUGE_VAL,
                        scheduler.WakeupTime(now));
    if (std::isinf(t)) {
      if (scheduler.HasWork()) {
        return InternalError(fmt::format("{}: scheduler stalled at t={:.3f}s with work left",
                                         scheduler.name(), now));
      }
      break;
    }
    now = t > now ? t : now + 1e-9;
  }
  const SchedulerStats st = scheduler.stats();
  std::vector<double> ttft, tpot;
  double last_finish = start;
  std::int64_t tokens = 0, out_tokens = 0, lowbit = 0;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    const Request& r = reqs[i];
    const RequestRecord& rec = records[i];
    if (rec.outcome == Outcome::kRejected) {
      if (rec.reason == RejectReason::kExceedsContext) {
        ++out.rejected_context;
        continue;
      }
      if (rec.reason == RejectReason::kExceedsKvCache) {
        ++out.rejected_kv;
        continue;
      }
      ++out.rejected_queue;
    }
    ClassResult& cls = out.per_class[static_cast<std::size_t>(r.qos)];
    ++cls.requests;
    if (rec.outcome != Outcome::kFinished) continue;
    ++out.finished;
    ++cls.finished;
    const double f_ttft = rec.first_token_s - r.arrival_s;
    const double f_tpot = r.output > 1 ? (rec.finish_s - rec.first_token_s) / (r.output - 1) : 0;
    ttft.push_back(f_ttft);
    tpot.push_back(f_tpot);
    if (f_ttft <= options.slo_ttft_s && f_tpot <= options.slo_tpot_s) {
      ++out.met;
      ++cls.met;
    }
    last_finish = std::max(last_finish, rec.finish_s);
    tokens += std::int64_t{r.prompt} + r.output;
    out_tokens += r.output;
    lowbit += rec.lowbit_kv ? 1 : 0;
  }
  out.servable = out.requests - out.rejected_context - out.rejected_kv;
  for (auto& c : out.per_class) {
    c.attainment = c.requests > 0 ? static_cast<double>(c.met) / static_cast<double>(c.requests) : 1.0;
  }
  out.makespan_s = last_finish - start;
  const double span = std::max(out.makespan_s, 1e-9);
  out.throughput_rps = static_cast<double>(out.finished) / span;
  out.goodput_rps = static_cast<double>(out.met) / span;
  out.tokens_per_s = static_cast<double>(tokens) / span;
  out.output_tokens_per_s = static_cast<double>(out_tokens) / span;
  out.slo_attainment =
      out.servable > 0 ? static_cast<double>(out.met) / static_cast<double>(out.servable) : 0;
  out.ttft_p50_s = Percentile(ttft, 50);
  out.ttft_p99_s = Percentile(ttft, 99);
  out.tpot_p50_s = Percentile(tpot, 50);
  out.tpot_p99_s = Percentile(tpot, 99);
  out.kv_use_mean = busy > 0 ? kv_time / busy : 0;
  out.preemptions = st.preemptions;
  out.kv_compressions = st.kv_compressions;
  out.recomputed_tokens = st.recomputed_tokens;
  const double slots = static_cast<double>(st.padded_tokens + st.useful_tokens);
  out.padding_share = slots > 0 ? static_cast<double>(st.padded_tokens) / slots : 0;
  out.lowbit_kv_share = out.finished > 0 ? static_cast<double>(lowbit) / static_cast<double>(out.finished) : 0;
  out.lowbit_kv_token_share = st.kv_token_reads > 0 ? static_cast<double>(st.kv_lowbit_token_reads) /
                                                         static_cast<double>(st.kv_token_reads)
                                                   : 0;
  out.usd_per_mtok = tokens > 0 ? options.usd_per_gpu_hour * (span / 3600.0) /
                                      (static_cast<double>(tokens) / 1e6)
                                : 0;
  return out;
}

}  // namespace seedance::batching
