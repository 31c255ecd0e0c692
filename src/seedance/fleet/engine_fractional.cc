// Notebooks on whole GPUs or on MIG slices (StackConfig::fractional_gpus, issue 39): where a
// notebook may run, packing slices onto partitioned GPUs, and giving a GPU back whole when its
// last slice is released.
#include <string>
#include <utility>
#include <vector>

#include "seedance/fleet/engine_internal.h"
#include "seedance/fleet/fractional.h"

namespace seedance::fleet::detail {

std::vector<Engine::DevOption> Engine::DevOptions(const DevRun& d) const {
  std::vector<DevOption> out;
  const int type = d.dev->type;
  const std::string& name = s_.fleet.gpu_types[static_cast<std::size_t>(type)];
  // Its own type: a whole GPU, committed pools first (round 4: a slice of the type it asked for
  // gives it a fraction of that GPU, and its work counts only that fraction, while an owned GPU
  // so freed is billed all the same: the layer alone made the base's unit cost dearer).
  const std::vector<int> cands = TypeCandidates(type);
  for (int pool : cands) {
    if (pools_[static_cast<std::size_t>(pool)].committed()) out.push_back({pool, nullptr, 1.0});
  }
  // Then committed GPUs of another MIG type, on a slice with at least the FP16 rate and the
  // memory bandwidth of the type the notebook asked for (its useful work counts as that type's
  // GPU-hour: no more).
  const auto [flops, bandwidth] = CatalogRates(name);
  if (c_.fractional_gpus && flops > 0 && bandwidth > 0) {
    for (const PoolRun& p : pools_) {
      if (!p.committed() || p.spec->type == type) continue;
      const auto [other_flops, other_bandwidth] = CatalogRates(s_.fleet.gpu_types[static_cast<std::size_t>(p.spec->type)]);
      if (other_flops <= 0 || other_bandwidth <= 0) continue;
      const MigProfile* prof = NotebookProfile(s_.fleet.gpu_types[static_cast<std::size_t>(p.spec->type)], d.dev->memory_gb,
                                               flops / other_flops, bandwidth / other_bandwidth);
      if (prof) out.push_back({p.index, prof, 1.0});
    }
  }
  for (int pool : cands) {
    if (!pools_[static_cast<std::size_t>(pool)].committed()) out.push_back({pool, nullptr, 1.0});
  }
  return out;
}

bool Engine::TakeSlice(DevRun& d, const DevOption& o, bool dry_run) {
  int best = -1;
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    const Partition& p = partitions_[i];
    if (p.used == 0 || p.gpu.pool != o.pool || p.profile != o.profile || p.used >= p.profile->instances) continue;
    if (best < 0 || p.used > partitions_[static_cast<std::size_t>(best)].used) best = static_cast<int>(i);
  }
  if (best < 0) {
    // Partition a whole free GPU (MIG reconfiguration needs an empty GPU: one no slice is on),
    // only while the pool keeps its free share for its own type's work.
    if (FreeShare(pools_[static_cast<std::size_t>(o.pool)]) < c_.fractional_min_free_share - 1e-9) return false;
    if (dry_run) return CouldPlace(d.pod, {o.pool});
    Partition fresh;
    fresh.pod = d.pod;
    fresh.profile = o.profile;
    if (!TryPlace(fresh.pod, {o.pool}, &fresh.gpu)) return false;
    ++out_.mig_partitions;
    for (std::size_t i = 0; i < partitions_.size() && best < 0; ++i) {
      if (partitions_[i].used == 0) best = static_cast<int>(i);
    }
    if (best < 0) {
      best = static_cast<int>(partitions_.size());
      partitions_.push_back(fresh);
    } else {
      partitions_[static_cast<std::size_t>(best)] = fresh;
    }
  } else if (dry_run) {
    return true;
  }
  Partition& p = partitions_[static_cast<std::size_t>(best)];
  ++p.used;
  d.partition = best;
  d.where = p.gpu;
  d.share = o.profile->ComputeFraction();
  d.work = o.work;
  ++out_.dev_on_slices;
  return true;
}

double Engine::FreeShare(const PoolRun& p) const {
  std::int64_t idle = 0, all = 0;
  for (std::size_t n = 0; n < p.slots.size(); ++n) {
    if (p.slots[n].phase != Phase::kUp) continue;
    idle += p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle();
    all += static_cast<std::int64_t>(p.slots[n].gpus) * cluster::kMilliPerGpu;
  }
  return all > 0 ? static_cast<double>(idle) / static_cast<double>(all) : 0.0;
}

bool Engine::PlaceDev(DevRun& d) {
  if (!c_.fractional_gpus) return TryPlace(d.pod, TypeCandidates(d.dev->type), &d.where);
  for (const DevOption& o : DevOptions(d)) {
    if (o.profile ? TakeSlice(d, o, false) : TryPlace(d.pod, {o.pool}, &d.where)) return true;
  }
  return false;
}

bool Engine::DevCouldPlace(const DevRun& d) {
  if (!c_.fractional_gpus) return CouldPlace(d.pod, TypeCandidates(d.dev->type));
  DevRun probe = d;
  for (const DevOption& o : DevOptions(d)) {
    if (o.profile ? TakeSlice(probe, o, true) : CouldPlace(d.pod, {o.pool})) return true;
  }
  return false;
}

void Engine::ClaimBootDev(const DevRun& d) { ClaimBoot(TypeCandidates(d.dev->type), 1, /*replica=*/false); }

void Engine::ReleaseDev(DevRun& d) {
  if (d.partition < 0) {
    Release(d.where, d.pod);
    return;
  }
  Partition& p = partitions_[static_cast<std::size_t>(d.partition)];
  --p.used;
  if (p.used == 0) Release(p.gpu, p.pod);  // the last slice: the GPU is whole again
  d.where = Where{};
  d.partition = -1;
  d.share = 1;
  d.work = 1;
}

}  // namespace seedance::fleet::detail
