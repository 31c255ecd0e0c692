#include "seedance/advise/testing/waste_stream.h"

#include <algorithm>
#include <cstdio>

#include "seedance/core/rng.h"

namespace seedance::advise::testing {
namespace {

struct Holder {
  std::string pod, ns;
  double activity = 0;  // mean GR_ENGINE_ACTIVE
  double mem_mib = 0;
  double io_wait = 0;   // PSI io waiting seconds per second
  int first_gpu = 0;    // global GPU index of the holder's first GPU
  int gpus = 1;
  std::string annotations = {};  // extra kube_pod_annotations labels (`,name="value"`...)
};

}  // namespace

void GenerateWasteStream(const WasteStreamSpec& spec,
                         const std::function<void(std::string_view)>& emit) {
  Rng rng(spec.seed);
  const int n_gpus = spec.nodes * spec.gpus_per_node;
  std::vector<int> holder_of(static_cast<std::size_t>(n_gpus), -1);
  std::vector<Holder> holders;
  auto plant = [&](Holder h) {
    for (int g = h.first_gpu; g < h.first_gpu + h.gpus; ++g) {
      holder_of[static_cast<std::size_t>(g)] = static_cast<int>(holders.size());
    }
    holders.push_back(std::move(h));
  };
  const int per = spec.gpus_per_node;
  if (spec.idle_namespace) plant({"notebook-0", "sandbox", 0.01, 2000, 0.02, 0, 2});
  if (spec.input_bound && spec.nodes > 1) {
    plant({"etl-train-0", "team-a", 0.8 * (1.0 - spec.stall), 60000, spec.stall, per, 4});
  }
  if (spec.oversized && spec.nodes > 2) plant({"small-ft-0", "team-b", 0.08, 12000, 0.02, 2 * per, 1});
  if (spec.spot_eligible && spec.nodes > 3) {
    Holder h{"batch-train-0", "research", 0.75, 61440, 0.02, 3 * per, 2};
    h.annotations = ",annotation_seedance_io_checkpoint_interval=\"30m\",annotation_seedance_io_deadline_slack=\"24h\"";
    plant(h);
  }
  if (spec.unit_cost_outlier && spec.nodes > 3 && per > 2) {
    plant({"slow-eval-0", "team-b", 0.34, 61440, 0.02, 3 * per + 2, 1});
  }
  // Clean jobs: 2-GPU gangs on every GPU left (a single GPU when one is left on a node).
  const char* namespaces[] = {"team-a", "team-b", "research"};
  int seq = 0;
  for (int g = 0; g < n_gpus; ++g) {
    if (holder_of[static_cast<std::size_t>(g)] >= 0) continue;
    int node_end = (g / per + 1) * per;
    int width = g + 1 < node_end && holder_of[static_cast<std::size_t>(g + 1)] < 0 ? 2 : 1;
    Holder h;
    h.pod = "job-" + std::to_string(seq++) + "-0";
    h.ns = namespaces[rng.Uniform(3)];
    h.activity = 0.6 + 0.3 * rng.UniformDouble();
    h.mem_mib = 51200 + 25600 * rng.UniformDouble();
    h.io_wait = 0.02;
    h.first_gpu = g;
    h.gpus = width;
    plant(h);
  }
  std::vector<double> io_counter(holders.size(), 0.0);
  std::string text;
  char line[512];
  for (std::int64_t t = spec.start_ms; t < spec.start_ms + spec.duration_ms; t += spec.interval_ms) {
    text.clear();
    for (int g = 0; g < n_gpus; ++g) {
      const Holder& h = holders[static_cast<std::size_t>(holder_of[static_cast<std::size_t>(g)])];
      double act = std::clamp(h.activity + 0.01 * (2 * rng.UniformDouble() - 1), 0.0, 1.0);
      double mem = h.mem_mib * (0.98 + 0.02 * rng.UniformDouble());
      const double values[] = {act, act * 0.7, mem, 70.0 + 500.0 * act};
      const char* names[] = {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                             "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_POWER_USAGE"};
      for (int m = 0; m < 4; ++m) {
        int n = std::snprintf(
            line, sizeof(line),
            "%s{gpu=\"%d\",UUID=\"GPU-%04d-advise\",modelName=\"%s\",Hostname=\"gpu-node-%d\","
            "container=\"main\",namespace=\"%s\",pod=\"%s\"} %.6f %lld\n",
            names[m], g % per, g, spec.model.c_str(), g / per, h.ns.c_str(), h.pod.c_str(),
            values[m], static_cast<long long>(t));
        text.append(line, static_cast<std::size_t>(n));
      }
    }
    for (std::size_t i = 0; i < holders.size(); ++i) {
      const Holder& h = holders[i];
      int n = std::snprintf(line, sizeof(line),
                            "container_pressure_io_waiting_seconds_total{container=\"main\","
                            "namespace=\"%s\",pod=\"%s\"} %.3f %lld\n",
                            h.ns.c_str(), h.pod.c_str(), io_counter[i], static_cast<long long>(t));
      text.append(line, static_cast<std::size_t>(n));
      io_counter[i] += h.io_wait * static_cast<double>(spec.interval_ms) / 1000.0;
      n = std::snprintf(line, sizeof(line), "kube_pod_annotations{namespace=\"%s\",pod=\"%s\"%s} 1 %lld\n",
                        h.ns.c_str(), h.pod.c_str(), h.annotations.c_str(), static_cast<long long>(t));
      text.append(line, static_cast<std::size_t>(n));
    }
    emit(text);
  }
}

}  // namespace seedance::advise::testing
