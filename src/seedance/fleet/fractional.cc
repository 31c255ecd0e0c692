#include "seedance/fleet/fractional.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "seedance/batching/model.h"
#include "seedance/fleet/serving.h"
#include "seedance/gpu/catalog.h"

namespace seedance::fleet {

const MigProfile* NotebookProfile(std::string_view gpu_type, double memory_gb, double min_compute_fraction,
                                  double min_memory_fraction) {
  if (memory_gb <= 0) return nullptr;
  const MigProfile* best = nullptr;
  for (const MigProfile& p : MigProfiles()) {
    if (p.gpu_type != gpu_type || p.memory_gb < memory_gb || p.ComputeFraction() < min_compute_fraction - 1e-12 ||
        p.MemoryFraction() < min_memory_fraction - 1e-12) {
      continue;
    }
    if (!best || std::make_tuple(-p.instances, p.compute_sevenths) < std::make_tuple(-best->instances, best->compute_sevenths)) {
      best = &p;
    }
  }
  return best;
}

GpuRates CatalogRates(std::string_view gpu_type) {
  const auto idx = gpu::ParseGpuName(gpu_type, gpu::NameMatch::kName);
  if (!idx.has_value()) return {};
  return {gpu::GpuAt(*idx).fp16_tflops, gpu::GpuAt(*idx).memory_gb_s};
}

double NotebookWorkPerGpuHour(std::string_view asked, std::string_view on) {
  if (asked == on) return 1.0;
  double smallest = 1.0;  // compute fraction of `on`'s smallest slice
  for (const MigProfile& p : MigProfiles()) {
    if (p.gpu_type == on) smallest = std::min(smallest, p.ComputeFraction());
  }
  const double cap = 1.0 / smallest;
  const double asked_rate = CatalogRates(asked).fp16_tflops, on_rate = CatalogRates(on).fp16_tflops;
  if (asked_rate <= 0 || on_rate <= 0) return cap;
  return std::min(cap, on_rate / asked_rate);
}

bool ReplicaSliceIsCheaper(const MigProfile& profile, double slice_rps, double whole_gpu_rps, double replica_memory_gb) {
  if (slice_rps <= 0 || whole_gpu_rps <= 0 || replica_memory_gb > profile.memory_gb) return false;
  // $ per request: price / instances / slice_rps on a slice, price / whole_gpu_rps on the GPU.
  return profile.instances * slice_rps > whole_gpu_rps;
}

double ScaledSliceRps(const MigProfile& profile, double whole_gpu_rps) {
  return whole_gpu_rps * profile.ComputeFraction();
}

double ReplicaMemoryGb(const std::string& model) {
  const auto m = batching::FindModel(model);
  if (!m.has_value()) return 0;
  const double weights = m->params * 2;
  const double kv = 2.0 * m->layers * m->kv_heads * m->head_dim * 2 * m->max_context;
  return (weights + kv) / 1e9;
}

std::string ReplicaSliceVerdict(const ServingProfile& profile, double replica_memory_gb, int* cheaper) {
  *cheaper = 0;
  std::string best;
  double best_ratio = 0;  // a GPU of slices' req/s over the whole GPU's
  for (std::size_t t = 0; t < profile.gpus.size(); ++t) {
    const double whole = profile.replica_rps[t];
    if (profile.tp[t] != 1 || whole <= 0) continue;
    for (const MigProfile& p : MigProfiles()) {
      if (p.gpu_type != profile.gpus[t] || p.memory_gb < replica_memory_gb) continue;
      const double slice = ScaledSliceRps(p, whole);
      *cheaper += ReplicaSliceIsCheaper(p, slice, whole, replica_memory_gb);
      const double ratio = p.instances * slice / whole;
      if (ratio > best_ratio) {
        best_ratio = ratio;
        best = fmt::format("{} {}: {} x {:.2f} req/s vs {:.2f} whole", p.gpu_type, p.name, p.instances, slice, whole);
      }
    }
  }
  if (best.empty()) return fmt::format("no MIG slice holds a replica ({:.1f} GB)", replica_memory_gb);
  return fmt::format("{} on MIG slices (best {}; {:.1f} GB a replica)", *cheaper ? "cheaper" : "whole GPUs: none cheaper",
                     best, replica_memory_gb);
}

}  // namespace seedance::fleet
