#include "seedance/fleet/decomposition.h"

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace seedance::fleet {
namespace {

void Add(double from, double* to) { *to += from; }

template <typename T, std::size_t N>
void Add(const std::array<T, N>& from, std::array<T, N>* to) {
  for (std::size_t k = 0; k < N; ++k) Add(from[k], &(*to)[k]);
}

template <typename T>
void Add(const std::vector<T>& from, std::vector<T>* to) {
  if (to->size() < from.size()) to->resize(from.size());
  for (std::size_t k = 0; k < from.size(); ++k) Add(from[k], &(*to)[k]);
}

template <typename T>
const T& At(const std::vector<T>& v, std::size_t k) {
  static const T zero{};
  return k < v.size() ? v[k] : zero;
}

double SumOf(const std::array<double, 3>& a) { return a[0] + a[1] + a[2]; }

}  // namespace

void AddDecomposition(const FleetWeekOutcome& o, FleetWeekOutcome* sum) {
  if (sum->gpu_types.empty()) sum->gpu_types = o.gpu_types;
  Add(o.cloud_gpu_hours_by_type, &sum->cloud_gpu_hours_by_type);
  Add(o.cloud_usd_by_type, &sum->cloud_usd_by_type);
  Add(o.owned_free_gpu_hours_by_type, &sum->owned_free_gpu_hours_by_type);
  Add(o.owned_free_while_cloud_training_gpu_hours_by_type, &sum->owned_free_while_cloud_training_gpu_hours_by_type);
  Add(o.training_gpu_hours_by_type, &sum->training_gpu_hours_by_type);
  Add(o.training_pflop_by_type, &sum->training_pflop_by_type);
  Add(o.committed_training_gpu_hours_by_type, &sum->committed_training_gpu_hours_by_type);
  Add(o.serving_gpu_hours_by_type, &sum->serving_gpu_hours_by_type);
  sum->training_lost_pflop += o.training_lost_pflop;
  sum->training_lost_gpu_hours += o.training_lost_gpu_hours;
  sum->training_restore_gpu_hours += o.training_restore_gpu_hours;
}

nlohmann::json DecompositionJson(const FleetWeekOutcome& o) {
  nlohmann::json j;
  j["what"] =
      "the committed bill (paid whatever runs), then per GPU type: committed GPU-hours free and, of those, free while "
      "training ran on a cloud node; training GPU-hours (all pools, committed) and serving GPU-hours; the cloud bill and "
      "GPU-hours held by tier and use (a MIG slice counts its compute fraction); and the training work lost";
  j["committed_usd"] = o.committed_usd;
  j["training_lost_gpu_hours"] = o.training_lost_gpu_hours;
  j["training_restore_gpu_hours"] = o.training_restore_gpu_hours;
  nlohmann::json by_type = nlohmann::json::object();
  for (std::size_t t = 0; t < o.gpu_types.size(); ++t) {
    nlohmann::json row;
    row["owned_free_gpu_hours"] = At(o.owned_free_gpu_hours_by_type, t);
    row["owned_free_while_cloud_training_gpu_hours"] = At(o.owned_free_while_cloud_training_gpu_hours_by_type, t);
    row["training_gpu_hours"] = SumOf(At(o.training_gpu_hours_by_type, t));
    row["committed_training_gpu_hours"] = SumOf(At(o.committed_training_gpu_hours_by_type, t));
    row["serving_gpu_hours"] = At(o.serving_gpu_hours_by_type, t);
    const char* tiers[] = {"on_demand", "spot"};
    for (std::size_t tier = 0; tier < 2; ++tier) {
      nlohmann::json c;
      c["usd"] = At(o.cloud_usd_by_type, t)[tier];
      for (int u = 0; u < kNumUses; ++u) c["gpu_hours"][UseName(u)] = At(o.cloud_gpu_hours_by_type, t)[tier][static_cast<std::size_t>(u)];
      row[tiers[tier]] = c;
    }
    by_type[o.gpu_types[t]] = row;
  }
  j["by_type"] = by_type;
  return j;
}

nlohmann::json BoundDecompositionJson(const BoundDecomposition& b) {
  nlohmann::json j;
  j["what"] = "the bound's LP solution for the base's work: per GPU type the GPU-hours it gives training, serving and "
              "notebooks, and the GPU-hours and $ it takes from committed, on-demand and spot pools (committed at 0 $: "
              "their bill is committed_usd)";
  j["committed_usd"] = b.committed_usd;
  nlohmann::json by_type = nlohmann::json::object();
  const char* uses[] = {"training", "serving", "notebooks"};
  const char* tiers[] = {"committed", "on_demand", "spot"};
  for (std::size_t t = 0; t < b.gpu_types.size(); ++t) {
    nlohmann::json row;
    for (std::size_t k = 0; k < 3; ++k) {
      row["gpu_hours"][uses[k]] = At(b.gpu_hours_by_use, t)[k];
      row[tiers[k]] = {{"gpu_hours", At(b.pool_gpu_hours, t)[k]}, {"usd", At(b.pool_usd, t)[k]}};
    }
    by_type[b.gpu_types[t]] = row;
  }
  j["by_type"] = by_type;
  return j;
}

}  // namespace seedance::fleet
