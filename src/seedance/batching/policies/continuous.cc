// Continuous (iteration-level) batching: the vLLM-style baseline and Seedance, one engine
// with the Seedance mechanisms as switches (ContinuousConfig), so that every difference in
// the results comes from a named mechanism.
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <queue>
#include <set>
#include <string>

#include "seedance/batching/policies/request_level.h"

namespace seedance::batching::internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kControllerPeriodS = 0.2;  // S5.4

class ContinuousScheduler final : public Scheduler {
 public:
  ContinuousScheduler(std::string name, const EngineConfig& e, const ContinuousConfig& c,
                      const Executor* executor, std::vector<RequestRecord>* records)
      : name_(std::move(name)),
        engine_(e),
        cfg_(c),
        executor_(executor),
        records_(records),
        seqs_(records->size()),
        blocks_(MakeBlockManager(e)),
        cold_owner_base_(static_cast<std::uint32_t>(records->size())) {
    ordered_ = c.qos_priority || c.length_aware || c.slo_aware || c.fairness;
    stats_.batch_cap = c.max_num_seqs;
    controller_cap_ = c.max_num_seqs;
    tenant_tokens_.assign(1, 0);
    if (c.pareto_cap && executor_ != nullptr) UpdateParetoCap();
  }

  std::string_view name() const override { return name_; }
  const BlockManager& blocks() const override { return blocks_; }
  SchedulerStats stats() const override { return stats_; }
  const std::vector<CapSample>& cap_history() const override { return cap_history_; }
  bool HasWork() const override { return !running_.empty() || WaitingSize() > 0; }

  void Admit(const Request& r, double now) override {
    (void)now;
    Seq& s = seqs_[r.id];
    s.r = r;
    const std::int64_t tokens = std::int64_t{r.prompt} + r.output;
    RequestRecord& rec = (*records_)[r.id];
    if (tokens > engine_.max_context) {
      rec.outcome = Outcome::kRejected;
      rec.reason = RejectReason::kExceedsContext;
      return;
    }
    if (blocks_.BlocksFor(tokens) > blocks_.total_blocks()) {
      rec.outcome = Outcome::kRejected;
      rec.reason = RejectReason::kExceedsKvCache;
      return;
    }
    if (r.tenant >= tenant_tokens_.size()) tenant_tokens_.resize(r.tenant + 1u, 0);
    PushWaiting(r.id, /*front=*/false);
    if (cfg_.slo_aware) late_heap_.push({r.arrival_s + engine_.slo_ttft_s, r.id});
  }

  bool NextBatch(double now, Batch* batch) override {
    batch->Clear();
    batch->shape.extra_seconds = pending_extra_s_;
    pending_extra_s_ = 0;
    if (cfg_.slo_aware) PromoteLate(now);
    if (cfg_.kv_tiers) CoolDown();
    std::int64_t budget = TokenBudget();
    bool preempted = false;
    // 1. Running sequences, in order (decodes and unfinished prefill chunks).
    for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
      const std::uint32_t id = running_[i];
      Seq& s = seqs_[id];
      const std::int64_t need = std::min<std::int64_t>(Remaining(s), budget);
      bool self_preempted = false;
      while (!blocks_.EnsureTokens(id, KvTokens(s.computed + need))) {
        preempted = true;
        if (running_.size() - 1 > i) {
          Preempt(running_.back());
          running_.pop_back();
        } else if (!cold_.empty()) {
          DropColdCopy(cold_.back());
        } else {
          Preempt(id);
          running_.pop_back();
          self_preempted = true;
          break;
        }
      }
      if (self_preempted) break;
      AddItem(batch, id, need);
      budget -= need;
    }
    // 2. Waiting sequences (vLLM: only when nothing was preempted this step).
    if (!preempted || cfg_.admit_after_preemption) AdmitWaiting(batch, &budget);
    BuildShape(batch);
    if (batch->items.empty()) {
      pending_extra_s_ = batch->shape.extra_seconds;
      return false;
    }
    return true;
  }

  void ApplyStep(const Batch& batch, double end_s, const StepCost& cost) override {
    bool finished_any = false;
    for (const ScheduledItem& item : batch.items) {
      Seq& s = seqs_[item.seq];
      s.computed += item.tokens;
      stats_.useful_tokens += item.tokens;
      tenant_tokens_[s.r.tenant] += static_cast<std::uint64_t>(item.tokens);
      RequestRecord& rec = (*records_)[item.seq];
      if (s.computed == s.r.prompt + rec.generated) {
        ++rec.generated;
        if (rec.generated == 1) rec.first_token_s = end_s;
        if (rec.generated == s.r.output) {
          rec.finish_s = end_s;
          rec.outcome = Outcome::kFinished;
          blocks_.Free(item.seq);
          s.state = State::kDone;
          finished_any = true;
        }
      }
    }
    if (finished_any) {
      std::erase_if(running_, [&](std::uint32_t id) { return seqs_[id].state == State::kDone; });
    }
    if (Capped()) Control(batch, end_s, cost);
  }

 private:
  enum class State : std::uint8_t { kNew, kWaiting, kRunning, kDone };
  // Seedance waiting order: class, tier (0 resumed, 1 on time, 2 late), score, id.
  struct Key {
    std::uint8_t cls;
    std::uint8_t tier;
    double score;
    std::uint32_t id;
    bool operator<(const Key& o) const {
      if (cls != o.cls) return cls < o.cls;
      if (tier != o.tier) return tier < o.tier;
      if (score != o.score) return score < o.score;
      return id < o.id;
    }
  };

  struct Seq {
    Request r;
    std::int32_t computed = 0;       // tokens whose KV is in the cache
    std::int64_t admit_order = 0;
    std::int64_t cold_blocks = 0;    // blocks of the compressed copy (kv_tiers)
    double heat = 1;
    int cold_bits = 16;
    bool swapped = false;
    bool late = false;
    State state = State::kNew;
    Key key{};
  };
  std::int64_t Remaining(const Seq& s) const {
    return std::int64_t{s.r.prompt} + (*records_)[s.r.id].generated - s.computed;
  }

  // ---- waiting queue ----
  std::size_t WaitingSize() const { return ordered_ ? waiting_set_.size() : waiting_fifo_.size(); }
  Key MakeKey(std::uint32_t id) const {
    const Seq& s = seqs_[id];
    Key k{0, 1, 0, id};
    if (cfg_.qos_priority) k.cls = static_cast<std::uint8_t>(s.r.qos);
    const bool started = (*records_)[id].generated > 0 || s.cold_blocks > 0 || s.swapped;
    if (started) {
      k.tier = 0;
      k.score = static_cast<double>(s.admit_order);
      return k;
    }
    if (s.late) k.tier = 2;
    k.score = cfg_.length_aware
                  ? static_cast<double>(Remaining(s)) + cfg_.aging_tokens_per_s * s.r.arrival_s
                  : s.r.arrival_s;
    if (cfg_.fairness) k.score -= 2000.0 * Compensation(s.r.tenant);
    return k;
  }
  void PushWaiting(std::uint32_t id, bool front) {
    Seq& s = seqs_[id];
    s.state = State::kWaiting;
    if (ordered_) {
      s.key = MakeKey(id);
      waiting_set_.insert(s.key);
    } else if (front) {
      waiting_fifo_.push_front(id);
    } else {
      waiting_fifo_.push_back(id);
    }
  }
  std::uint32_t TopWaiting() const {
    return ordered_ ? waiting_set_.begin()->id : waiting_fifo_.front();
  }
  void PopWaiting() {
    if (ordered_) {
      waiting_set_.erase(waiting_set_.begin());
    } else {
      waiting_fifo_.pop_front();
    }
  }

  // S4.5: a tenant below its equal share of served tokens gains priority (clamped +-0.3).
  double Compensation(std::uint16_t tenant) const {
    std::uint64_t total = 0;
    std::size_t active = 0;
    for (std::uint64_t t : tenant_tokens_) {
      total += t;
      active += t > 0 ? 1 : 0;
    }
    if (total == 0 || active == 0) return 0;
    const double fair = 1.0 / static_cast<double>(tenant_tokens_.size());
    const double share = static_cast<double>(tenant_tokens_[tenant]) / static_cast<double>(total);
    return std::clamp(fair - share, -0.3, 0.3);
  }

  void PromoteLate(double now) {
    while (!late_heap_.empty() && late_heap_.top().first <= now) {
      const std::uint32_t id = late_heap_.top().second;
      late_heap_.pop();
      Seq& s = seqs_[id];
      if (s.state != State::kWaiting || (*records_)[id].generated > 0 || s.late) continue;
      waiting_set_.erase(s.key);
      s.late = true;
      s.key = MakeKey(id);
      waiting_set_.insert(s.key);
    }
  }

  // ---- budget, Pareto cap and controller ----
  // The step's token budget. With the SLO budget: the most prefill tokens that keep the
  // predicted step within 0.9 x the TPOT SLO while decodes run, never above the configured
  // max_num_batched_tokens (the same ceiling vLLM gets).
  std::int64_t TokenBudget() const {
    const std::int64_t ceiling = cfg_.max_num_batched_tokens;
    if (!cfg_.slo_aware || executor_ == nullptr) return ceiling;
    BatchShape shape;
    for (std::uint32_t id : running_) {
      const Seq& s = seqs_[id];
      if (Remaining(s) == 1) {
        ++shape.decodes;
        shape.decode_kv_sum += ReadCost(s.computed + 1);
      }
    }
    const double target = 0.9 * engine_.slo_tpot_s;
    if (shape.decodes == 0) return ceiling;
    std::int64_t lo = std::min<std::int64_t>(128, ceiling), hi = ceiling;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi + 1) / 2;
      shape.prefills.assign(1, PrefillChunk{static_cast<std::int32_t>(mid), 0});
      if (executor_->Step(shape).seconds <= target) lo = mid; else hi = mid - 1;
    }
    return lo + shape.decodes;
  }

  bool Capped() const {
    return (cfg_.pareto_cap || cfg_.feedback_controller) && executor_ != nullptr;
  }

  void UpdateParetoCap() {
    // S5.3: candidates b = 1..max_num_seqs at the running mean context; keep those within the
    // KV capacity and the decode share of the TPOT target; choose maximum throughput.
    const double target = 0.6 * engine_.slo_tpot_s;
    const double capacity = static_cast<double>(blocks_.total_blocks()) * blocks_.block_size();
    double best_tput = 0;
    int best = 1;
    for (int b = 1; b <= cfg_.max_num_seqs; ++b) {
      BatchShape shape;
      shape.decodes = b;
      shape.decode_kv_sum = ReadCost(static_cast<std::int64_t>(b * mean_context_));
      const double lat = executor_->Step(shape).seconds;
      if (lat > target || b * mean_context_ > capacity) break;
      const double tput = b / lat;
      if (tput > best_tput) {
        best_tput = tput;
        best = b;
      }
    }
    pareto_best_ = best;
    SetCap();
  }

  // The cap in force: the Pareto batch size (or max_num_seqs without it) less the
  // controller's trim.
  void SetCap() {
    const int base = cfg_.pareto_cap ? pareto_best_ : cfg_.max_num_seqs;
    controller_cap_ = std::clamp(base - trim_, 1, base);
    stats_.batch_cap = controller_cap_;
  }

  void Control(const Batch& batch, double end_s, const StepCost& cost) {
    const double dt = cost.seconds;
    window_s_ += dt;
    window_sm_ += cost.sm_active * dt;
    window_dram_ += cost.dram_active * dt;
    if (batch.shape.decodes > 0) {
      const double ctx = static_cast<double>(batch.shape.decode_kv_sum) / batch.shape.decodes;
      mean_context_ = 0.98 * mean_context_ + 0.02 * ctx;
    }
    at_cap_ = at_cap_ || static_cast<int>(running_.size()) >= controller_cap_;
    if (end_s < next_tick_s_) return;
    next_tick_s_ = end_s + kControllerPeriodS;
    if (cfg_.feedback_controller && window_s_ > 0) {
      // S5.4: score = 0.7 SM-active + 0.3 DRAM-active over the last 200 ms; above 0.92 the cap
      // drops by 2, below 0.65 it grows back by 1. The controller trims the model's choice
      // (the Pareto batch size follows the load at once; the trim corrects the model where the
      // measured activity disagrees), and only grows the cap back when the cap bound the
      // running set in the window (anti-windup: an idle replica does not ratchet it up).
      const double score = (0.7 * window_sm_ + 0.3 * window_dram_) / window_s_;
      const int base = cfg_.pareto_cap ? pareto_best_ : cfg_.max_num_seqs;
      if (score > 0.92) {
        trim_ = std::min(base - 1, trim_ + 2);
      } else if (score < 0.65 && at_cap_) {
        trim_ = std::max(0, trim_ - 1);
      }
    }
    window_s_ = window_sm_ = window_dram_ = 0;
    at_cap_ = false;
    ++stats_.controller_updates;
    if (cfg_.pareto_cap) {
      UpdateParetoCap();
    } else {
      SetCap();
    }
    if (cfg_.record_cap_history) {
      cap_history_.push_back(CapSample{end_s, controller_cap_, static_cast<int>(running_.size())});
    }
  }

  int MaxRunning() const {
    return Capped() ? std::min(cfg_.max_num_seqs, controller_cap_) : cfg_.max_num_seqs;
  }

  // ---- admission ----
  void AdmitWaiting(Batch* batch, std::int64_t* budget) {
    while (*budget > 0 && WaitingSize() > 0) {
      const std::uint32_t id = TopWaiting();
      Seq& s = seqs_[id];
      if (static_cast<int>(running_.size()) >= MaxRunning()) {
        // At the batch cap a higher class displaces the lowest-class running sequence.
        if (!cfg_.qos_priority || running_.empty() || seqs_[running_.back()].r.qos <= s.r.qos) break;
        *budget += PreemptTail(batch);
      }
      const std::int64_t remaining = Remaining(s);
      const std::int64_t need = std::min(remaining, *budget);
      if (!cfg_.chunked_prefill && need < remaining) break;
      if (!ReserveForAdmission(batch, id, need, budget)) break;
      PopWaiting();
      s.state = State::kRunning;
      s.admit_order = ++admit_counter_;
      InsertRunning(id);
      AddItem(batch, id, need);
      *budget -= need;
    }
  }

  // Allocates the blocks `id` needs to run `need` tokens now (restoring a swapped or cold copy
  // first). Makes room by preempting lower classes (qos_priority) or dropping cold copies.
  bool ReserveForAdmission(Batch* batch, std::uint32_t id, std::int64_t need, std::int64_t* budget) {
    Seq& s = seqs_[id];
    const std::int64_t reserve = cfg_.growth_reserve ? static_cast<std::int64_t>(running_.size()) : 0;
    for (;;) {
      const std::int64_t want = blocks_.BlocksFor(KvTokens(s.computed + need)) - blocks_.Held(id);
      const std::int64_t freed_by_cold = s.cold_blocks;
      if (blocks_.CanAllocate(want + reserve - freed_by_cold, /*keep_watermark=*/true)) break;
      if (!MakeRoomFor(batch, s.r.qos, budget)) return false;
    }
    if (s.cold_blocks > 0) {  // restore the 4/6-bit copy to 16 bits
      blocks_.Free(cold_owner_base_ + id);
      pending_extra_s_ += s.computed * engine_.kv_bytes_per_token *
                          (1 + s.cold_bits / static_cast<double>(engine_.kv_bits)) /
                          engine_.dram_bytes_per_s;
      (*records_)[id].lowbit_kv = true;
      std::erase(cold_, id);
      s.cold_blocks = 0;
    }
    if (s.swapped) {
      pending_extra_s_ += s.computed * engine_.kv_bytes_per_token / engine_.pcie_bytes_per_s;
      s.swapped = false;
    }
    SEEDANCE_CHECK(blocks_.EnsureTokens(id, KvTokens(s.computed + need), /*keep_watermark=*/true));
    return true;
  }

  // Preempts the running tail, taking it out of the batch being built; returns the tokens
  // it had been given in this batch.
  std::int64_t PreemptTail(Batch* batch) {
    const std::uint32_t victim = running_.back();
    std::int64_t given = 0;
    for (const auto& it : batch->items) {
      if (it.seq == victim) given += it.tokens;
    }
    RemoveItem(batch, victim);
    Preempt(victim);
    running_.pop_back();
    return given;
  }

  bool MakeRoomFor(Batch* batch, QosClass cls, std::int64_t* budget) {
    if (!cfg_.qos_priority) return false;
    if (!running_.empty() && seqs_[running_.back()].r.qos > cls) {
      *budget += PreemptTail(batch);
      return true;
    }
    for (auto it = cold_.rbegin(); it != cold_.rend(); ++it) {
      if (seqs_[*it].r.qos > cls) {
        DropColdCopy(*it);
        return true;
      }
    }
    return false;
  }

  void InsertRunning(std::uint32_t id) {
    if (!cfg_.qos_priority) {
      running_.push_back(id);
      return;
    }
    // Keep running sorted by (class, admission): the tail is the preemption victim.
    auto pos = std::upper_bound(running_.begin(), running_.end(), id,
                                [&](std::uint32_t a, std::uint32_t b) {
                                  return seqs_[a].r.qos < seqs_[b].r.qos;
                                });
    running_.insert(pos, id);
  }

  void AddItem(Batch* batch, std::uint32_t id, std::int64_t tokens) {
    batch->items.push_back(ScheduledItem{id, static_cast<std::int32_t>(tokens)});
  }

  // Removes a preempted sequence's item from the batch being built (admission phase).
  static void RemoveItem(Batch* batch, std::uint32_t id) {
    std::erase_if(batch->items, [id](const ScheduledItem& it) { return it.seq == id; });
  }

  void BuildShape(Batch* batch) {
    for (const ScheduledItem& item : batch->items) {
      const Seq& s = seqs_[item.seq];
      batch->useful_tokens += item.tokens;
      if (item.tokens == 1 && Remaining(s) == 1 && (*records_)[item.seq].generated > 0) {
        const std::int64_t context = s.computed + 1;
        ++batch->shape.decodes;
        batch->shape.decode_kv_sum += ReadCost(context);  // the stored bytes + dequantization
        stats_.kv_token_reads += context;
        if (cfg_.kv_tiers && context > HotTokens()) {
          stats_.kv_lowbit_token_reads += context - std::min<std::int64_t>(context, HotTokens());
          (*records_)[item.seq].lowbit_kv = true;
        }
      } else {
        batch->shape.prefills.push_back(PrefillChunk{item.tokens, s.computed});
      }
    }
  }

  // ---- S5.7 KV precision tiers by heat ----
  // A KV token's heat is exp(-age / tau), age = tokens written after it: heat >= 0.7 (the
  // newest 0.357 tau tokens) stays 16-bit, 0.3..0.7 is kept at 6 bits, colder at 4 bits.
  // Returns the cache footprint of `tokens` tokens in 16-bit token equivalents.
  std::int64_t HotTokens() const {
    return static_cast<std::int64_t>(cfg_.kv_tier_tau_tokens * -std::log(0.7));
  }
  // Returns the cache footprint of `tokens` tokens in tokens at the engine's KV precision.
  std::int64_t KvTokens(std::int64_t tokens) const {
    if (!cfg_.kv_tiers) return tokens;
    const auto [h, w, c] = Tiers(tokens);
    const double bits = engine_.kv_bits;
    return static_cast<std::int64_t>(std::ceil(h + w * 6.0 / bits + c * 4.0 / bits));
  }
  // Hot, warm (6-bit) and cold (4-bit) token counts of a context of `tokens`.
  std::array<double, 3> Tiers(std::int64_t tokens) const {
    const double hot = cfg_.kv_tier_tau_tokens * -std::log(0.7);
    const double warm_end = cfg_.kv_tier_tau_tokens * -std::log(0.3);
    const auto l = static_cast<double>(tokens);
    return {std::min(l, hot), std::clamp(l - hot, 0.0, warm_end - hot), std::max(0.0, l - warm_end)};
  }
  // Decode-attention read cost of a context of `tokens` in FP16-token equivalents
  // (KvReadFactor: bytes at the stored precision plus its dequantization).
  std::int64_t ReadCost(std::int64_t tokens) const {
    if (!cfg_.kv_tiers) {
      return engine_.kv_bits == 16
                 ? tokens
                 : static_cast<std::int64_t>(std::ceil(static_cast<double>(tokens) * KvReadFactor(engine_.kv_bits)));
    }
    const auto [h, w, c] = Tiers(tokens);
    return static_cast<std::int64_t>(
        std::ceil(h * KvReadFactor(engine_.kv_bits) + w * KvReadFactor(6) + c * KvReadFactor(4)));
  }

  // ---- preemption ----
  // REQUIRES: `id` is running; the caller removes it from running_.
  void Preempt(std::uint32_t id) {
    Seq& s = seqs_[id];
    ++stats_.preemptions;
    ++(*records_)[id].preemptions;
    if (cfg_.kv_tiers && s.computed > 0) {
      // S5.7: the paused sequence's KV turns cold (heat halves); at heat < 0.7 it is kept at
      // 6 bits, below 0.3 at 4 bits, instead of being discarded.
      ++stats_.kv_compressions;
      s.heat = 0.5;
      Compress(id, 6);
      cold_.push_back(id);
    } else if (cfg_.preemption == PreemptionMode::kSwap && s.computed > 0) {
      ++stats_.swap_preemptions;
      pending_extra_s_ += s.computed * engine_.kv_bytes_per_token / engine_.pcie_bytes_per_s;
      s.swapped = true;
      blocks_.Free(id);
    } else {
      ++stats_.recompute_preemptions;
      stats_.recomputed_tokens += s.computed;
      s.computed = 0;
      blocks_.Free(id);
    }
    PushWaiting(id, /*front=*/true);
  }

  void Compress(std::uint32_t id, int bits) {
    Seq& s = seqs_[id];
    const std::int64_t full = std::max(blocks_.Held(id), s.cold_blocks);
    const std::int64_t cold = std::min(
        full, blocks_.BlocksFor((s.computed * bits + engine_.kv_bits - 1) / engine_.kv_bits));
    blocks_.Free(id);
    blocks_.Free(cold_owner_base_ + id);
    SEEDANCE_CHECK(blocks_.Allocate(cold_owner_base_ + id, cold));
    s.cold_blocks = cold;
    s.cold_bits = bits;
  }

  void CoolDown() {
    for (std::uint32_t id : cold_) {
      Seq& s = seqs_[id];
      s.heat *= 0.5;
      if (s.heat < 0.3 && s.cold_bits > 4) Compress(id, 4);
    }
  }

  void DropColdCopy(std::uint32_t id) {
    Seq& s = seqs_[id];
    blocks_.Free(cold_owner_base_ + id);
    ++stats_.recompute_preemptions;
    stats_.recomputed_tokens += s.computed;
    s.computed = 0;
    s.cold_blocks = 0;
    std::erase(cold_, id);
    if (s.state == State::kWaiting && ordered_) {  // re-key: still resumed tier
      waiting_set_.erase(s.key);
      s.key = MakeKey(id);
      waiting_set_.insert(s.key);
    }
  }

  std::string name_;
  EngineConfig engine_;
  ContinuousConfig cfg_;
  const Executor* executor_;
  std::vector<RequestRecord>* records_;
  std::vector<Seq> seqs_;
  BlockManager blocks_;
  std::uint32_t cold_owner_base_;
  bool ordered_ = false;
  std::deque<std::uint32_t> waiting_fifo_;
  std::set<Key> waiting_set_;
  std::priority_queue<std::pair<double, std::uint32_t>, std::vector<std::pair<double, std::uint32_t>>,
                      std::greater<>> late_heap_;
  std::vector<std::uint32_t> running_;
  std::vector<std::uint32_t> cold_;
  std::vector<std::uint64_t> tenant_tokens_;
  std::int64_t admit_counter_ = 0;
  double pending_extra_s_ = 0;
  SchedulerStats stats_;
  int controller_cap_ = 0;         // the cap in force
  int pareto_best_ = 256;          // the last S5.3 choice
  int trim_ = 0;                   // the S5.4 controller's reduction of it
  bool at_cap_ = false;            // the running set reached the cap in this window
  std::vector<CapSample> cap_history_;
  double mean_context_ = 1024;
  double next_tick_s_ = 0;
  double window_s_ = 0, window_sm_ = 0, window_dram_ = 0;
};

}  // namespace

std::unique_ptr<Scheduler> MakeContinuousScheduler(std::string_view name, const EngineConfig& e,
                                                   const ContinuousConfig& c,
                                                   const Executor* executor,
                                                   std::vector<RequestRecord>* records) {
  return std::make_unique<ContinuousScheduler>(std::string(name), e, c, executor, records);
}

}  // namespace seedance::batching::internal
