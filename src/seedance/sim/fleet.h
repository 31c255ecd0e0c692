#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/config/cost_aware.h"
#include "seedance/core/status.h"
#include "seedance/sim/spot_price.h"

namespace seedance::sim {

// Where a GPU comes from (S3): owned (always there; billed by use in Gavel-style accounting, or
// for every hour of the run when the pool is `committed`, as a fleet file's owned GPUs are),
// reserved (committed cloud capacity: always there, paid for every hour whether used or not),
// on-demand (provisioned after a cold start, billed per second from the request) or spot
// (cheaper, billed per second, taken back when the availability series drops).
enum class Tier { kOwned, kOnDemand, kSpot, kReserved };
std::string_view TierName(Tier tier);
// Owned and reserved GPUs are held from the start: no cold start, no autoscaling.
inline bool AlwaysHeld(Tier tier) { return tier == Tier::kOwned || tier == Tier::kReserved; }

// SpotSeries: how many spot GPUs of one pool exist at each tick (SkyPilot spot-traces format:
// {"metadata": {"gap_seconds": g}, "data": [n0, n1, ...]}, one value per tick, instances).
// The series repeats when a simulation outlasts it.
class SpotSeries {
 public:
  SpotSeries() = default;
  SpotSeries(double gap_s, std::vector<int> instances, int gpus_per_instance);

  // Loads one spot-traces JSON file. Errors name the file and the field.
  static Result<SpotSeries> LoadFile(const std::string& path, int gpus_per_instance);
  // Sums several series tick by tick (zones pooled, SkyPilot-style failover); gaps must match.
  static Result<SpotSeries> Sum(const std::vector<SpotSeries>& parts);

  bool empty() const { return instances_.empty(); }
  double gap_s() const { return gap_s_; }
  std::size_t ticks() const { return instances_.size(); }
  // Spot GPUs available at simulated time t (cyclic).
  int AvailableAt(double t) const;
  // First tick boundary strictly after t.
  double NextChangeAfter(double t) const;
  // Mean time between capacity drops over the whole series, future included, seconds. Only the
  // engine, the lower bound and the oracle reference may read it: policies see trailing
  // statistics (PoolView) instead.
  double MeanTimeBetweenDrops() const { return mtbf_s_; }
  // Instances at tick k (k < ticks()); for tests that rewrite a series' future.
  int InstancesAtTick(std::size_t k) const { return instances_[k]; }
  int gpus_per_instance() const { return gpus_per_instance_; }
  // Fraction of ticks with at least `gpus` available.
  double AvailabilityFraction(int gpus) const;

 private:
  double gap_s_ = 0;
  int gpus_per_instance_ = 1;
  std::vector<int> instances_;
  double mtbf_s_ = 0;  // computed once: policies read it for every job every round
};

// What a scheduler may know about a pool: GPUs of one type in one tier at a price.
struct PoolInfo {
  int type = 0;        // index into FleetSpec::gpu_types
  Tier tier = Tier::kOnDemand;
  int max_gpus = 0;    // quota (owned, reserved: the count)
  double usd_per_gpu_hour = 0;
  // Paid for every GPU of the pool for the whole run, used or not (reserved; owned at its TCO
  // from a fleet file). A scheduler's marginal price for such a pool is 0: it is paid already.
  bool committed = false;
  std::string region = {};  // where the pool is (a fleet file's region; "" = not stated)
  // The node shapes the cloud sells for the pool (GPUs per node, ascending; a fleet file's
  // `on_demand.node_gpus`), every shape at usd_per_gpu_hour per GPU; empty = not stated (the
  // simulator's own node size). Read by right-sizing autoscalers (Karpenter) only.
  std::vector<int> node_gpus = {};

  double MarginalUsdPerGpuHour() const { return committed ? 0.0 : usd_per_gpu_hour; }
};

// One capacity pool: its public part and, for spot, the availability series over the whole run
// (the future included), which only the engine and the lower bound read.
struct PoolSpec : PoolInfo {
  SpotSeries spot;     // tier == kSpot: availability; empty = always max_gpus
  // tier == kSpot: the price over the run (the future included); empty = usd_per_gpu_hour
  // throughout. With a series, usd_per_gpu_hour is its first price.
  PriceSeries price;

  // The price in force at t.
  double PriceAt(double t) const { return price.empty() ? usd_per_gpu_hour : price.At(t); }
  // USD `gpus` GPUs of the pool cost over [t0, t1] (0 when t1 <= t0): the price series integrated,
  // else the constant price (computed as gpus x seconds x price / 3600, as before series existed).
  double Usd(double gpus, double t0, double t1) const {
    if (!(t1 > t0)) return 0;
    return price.empty() ? gpus * (t1 - t0) * usd_per_gpu_hour / 3600.0 : gpus * price.UsdPerGpu(t0, t1);
  }
  // The mean price over [t0, t1] (the price at t0 when t1 <= t0).
  double MeanPriceOver(double t0, double t1) const {
    return price.empty() ? usd_per_gpu_hour : t1 > t0 ? price.UsdPerGpu(t0, t1) * 3600.0 / (t1 - t0) : price.At(t0);
  }
  // The lowest price in force during [t0, t1).
  double MinPriceOver(double t0, double t1) const { return price.empty() ? usd_per_gpu_hour : price.MinOver(t0, t1); }
  // What a scheduler pays for one more GPU-hour, as MarginalUsdPerGpuHour (committed pools: 0): at
  // t, and the lowest during [t0, t1).
  double MarginalPriceAt(double t) const { return committed ? 0.0 : PriceAt(t); }
  double MarginalMinPriceOver(double t0, double t1) const { return committed ? 0.0 : MinPriceOver(t0, t1); }
};

// How held capacity follows demand (S3.4): seedance-config.yaml's `scheduler.autoscaling.mode`.
using config::AutoscaleMode;
using config::AutoscaleModeName;

// What a scheduler may know about a fleet: its GPU types and the time constants of provisioning
// and recovery (no pool, so no availability series).
struct FleetInfo {
  std::string name;
  std::vector<std::string> gpu_types;
  double cold_start_s = 180;        // request -> usable (on-demand and spot)
  double scale_down_delay_s = 600;  // reactive autoscaler: idle time before release
  double restart_s = 60;            // restore from checkpoint after a preemption or a move
  double checkpoint_cost_s = 30;    // one checkpoint, seconds of lost progress
  // Seed's cold-start idle price (S3.4): host cores and memory billed while a node boots.
  double host_cores_per_gpu = 8;
  double host_gib_per_gpu = 32;
  double usd_per_core_s = 0.00012;
  double usd_per_gib_s = 0.00003;

  // Cold-start idle cost of one GPU for `seconds` (S3.4 formula).
  double ColdStartIdleUsd(double seconds) const;
};

// FleetSpec: GPU types, pools and the time constants of provisioning and recovery.
struct FleetSpec : FleetInfo {
  std::vector<PoolSpec> pools;

  // Index of the pool (type, tier) or -1.
  int FindPool(int type, Tier tier) const;
  Status Validate() const;
};

}  // namespace seedance::sim
