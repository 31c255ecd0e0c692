#include "seedance/planner/capacity.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/batching/replay.h"
#include "seedance/core/file_util.h"

namespace seedance::planner {
namespace {

using nlohmann::json;

struct Probe {
  double attainment = 0;
  double ttft_p50 = 0, tpot_p50 = 0;
  std::int64_t servable = 0;
};

Result<Probe> Run(const Engine& e, const batching::Trace& trace, std::uint64_t seed) {
  std::vector<batching::RequestRecord> records(trace.requests.size());
  SEEDANCE_ASSIGN_OR_RETURN(auto sched, batching::MakeScheduler(e.options.policy, e.settings,
                                                                e.predictor.get(), &records));
  batching::ReplayOptions ro{e.options.slo_ttft_s, e.options.slo_tpot_s, 0, batching::DefaultStepNoise()};
  ro.noise.seed = seed;
  SEEDANCE_ASSIGN_OR_RETURN(batching::PolicyResult r, batching::Replay(trace, *sched, *e.truth, records, ro));
  return Probe{r.slo_attainment, r.ttft_p50_s, r.tpot_p50_s, r.servable};
}

std::uint64_t Fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ULL;
  }
  return h;
}

// The profile's content, so that an edited --profile file is profiled again.
std::uint64_t ProfileFingerprint(const Engine& e) {
  std::ifstream in(batching::MlpProfilePath(e.options.data_dir, e.gpu, e.model), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return Fnv1a(ss.str());
}

std::string CacheKey(const Engine& e, const BucketGrid& grid, const ProbeOptions& p) {
  return fmt::format("v{} model={} tp={} profiles={} mlp={:016x} gpu={} policy={} ttft={} tpot={} grid={} target={} requests={} min_s={} max={} bisect={} seed={}",
                     kCapacityEngineVersion, e.model.name, e.model.tensor_parallel, e.model.profile_root,
                     ProfileFingerprint(e), e.gpu.name, e.options.policy, e.options.slo_ttft_s,
                     e.options.slo_tpot_s, grid.Key(), p.target_attainment, p.requests, p.min_probe_s, p.max_requests, p.bisect_steps, p.seed);
}

}  // namespace

Result<std::unique_ptr<Engine>> MakeEngine(const EngineOptions& options, const std::string& gpu) {
  auto e = std::make_unique<Engine>();
  e->options = options;
  SEEDANCE_ASSIGN_OR_RETURN(e->gpu, batching::FindGpu(gpu));
  SEEDANCE_ASSIGN_OR_RETURN(e->model, batching::FindModel(options.model));
  e->model.tensor_parallel = options.tensor_parallel;
  e->model.profile_root = options.profile_root;
  SEEDANCE_RETURN_IF_ERROR(batching::CheckTensorParallel(e->gpu, e->model, options.tensor_parallel,
                                                         batching::BatchingConfig().gpu_memory_utilization));
  SEEDANCE_ASSIGN_OR_RETURN(e->truth, batching::ProfiledExecutor::Load(options.data_dir, e->gpu, e->model,
                                                                       batching::Precision::kFp16,
                                                                       batching::ProfileSplit::kEven));
  SEEDANCE_ASSIGN_OR_RETURN(e->predictor, batching::ProfiledExecutor::Load(options.data_dir, e->gpu, e->model,
                                                                           batching::Precision::kFp16,
                                                                           batching::ProfileSplit::kOdd));
  batching::BatchingConfig cfg;
  cfg.data_dir = options.data_dir;
  cfg.slo_ttft_s = options.slo_ttft_s;
  cfg.slo_tpot_s = options.slo_tpot_s;
  e->settings = batching::PrepareSettings(cfg, e->gpu, e->model, *e->truth);
  if (e->settings.engine.kv_capacity_bytes <= 0) {
    return FailedPreconditionError(fmt::format("{} x {} does not fit {} in its memory", e->model.tensor_parallel,
                                               e->gpu.name, e->model.name));
  }
  return e;
}

void ProbeLengths(const BucketGrid& grid, int b, int max_context, int* prompt, int* output) {
  const auto i = static_cast<std::size_t>(b / grid.outputs()), o = static_cast<std::size_t>(b % grid.outputs());
  *output = grid.output_edges[o + 1];
  *prompt = std::min(grid.input_edges[i + 1], max_context - *output);
}

Result<BucketCapacity> MeasureBucket(const Engine& e, int prompt, int output, const ProbeOptions& p) {
  BucketCapacity c;
  c.prompt = prompt;
  c.output = output;
  c.profiled = true;
  batching::Trace lengths;
  lengths.name = fmt::format("probe {}+{}", prompt, output);
  lengths.requests.push_back(batching::Request{0, 0.0, prompt, output, batching::QosClass::kBurstable, 0, 0});
  SEEDANCE_ASSIGN_OR_RETURN(Probe lone, Run(e, lengths, p.seed));
  c.lone_ttft_s = lone.ttft_p50;
  c.lone_tpot_s = lone.tpot_p50;
  if (lone.servable == 0 || lone.attainment < 1) return c;  // ineligible: capacity 0
  auto attain = [&](double rate) -> Result<double> {
    // At least `requests`, and enough for min_probe_s of arrivals (a short burst would fit one
    // batch and overstate what the GPU sustains).
    const double n = std::clamp(rate * p.min_probe_s, static_cast<double>(p.requests),
                                static_cast<double>(std::max(p.requests, p.max_requests)));
    const batching::Trace t = batching::PoissonTrace(lengths, rate, static_cast<std::size_t>(n), p.seed);
    SEEDANCE_ASSIGN_OR_RETURN(Probe r, Run(e, t, p.seed + 1));
    return r.attainment;
  };
  const double start = 1.0 / (lone.ttft_p50 + lone.tpot_p50 * (output - 1));
  double lo = 0, hi = 0;
  SEEDANCE_ASSIGN_OR_RETURN(double a, attain(start));
  if (a >= p.target_attainment) {
    lo = start;
    for (hi = 2 * start;; hi *= 2) {
      if (hi > 4096 * start) return c.capacity_rps = lo, c;
      SEEDANCE_ASSIGN_OR_RETURN(double b, attain(hi));
      if (b < p.target_attainment) break;
      lo = hi;
    }
  } else {
    hi = start;
    for (lo = start / 2;; lo /= 2) {
      if (lo < start / 64) return c;  // not even 1/64 of a lone request's pace: ineligible
      SEEDANCE_ASSIGN_OR_RETURN(double b, attain(lo));
      if (b >= p.target_attainment) break;
      hi = lo;
    }
  }
  for (int i = 0; i < p.bisect_steps; ++i) {
    const double mid = 0.5 * (lo + hi);
    SEEDANCE_ASSIGN_OR_RETURN(double b, attain(mid));
    (b >= p.target_attainment ? lo : hi) = mid;
  }
  c.capacity_rps = lo;
  return c;
}

std::string CacheFileName(const Engine& e, const BucketGrid& grid, const ProbeOptions& p) {
  return fmt::format("capacity-{}-tp{}-{}-{}-ttft{}ms-tpot{}ms-{}-{:016x}.json", e.model.name, e.model.tensor_parallel, e.gpu.name,
                     e.options.policy, std::lround(e.options.slo_ttft_s * 1000),
                     std::lround(e.options.slo_tpot_s * 1000), grid.name, Fnv1a(CacheKey(e, grid, p)));
}

Result<CapacityTable> ProfileCapacity(const Engine& e, const BucketGrid& grid, const std::vector<bool>& needed,
                                      const ProbeOptions& p, const std::string& cache_dir, std::ostream* progress) {
  CapacityTable t;
  t.gpu = e.gpu.name;
  t.buckets.resize(static_cast<std::size_t>(grid.buckets()));
  const std::string key = CacheKey(e, grid, p);
  const std::string path = cache_dir.empty() ? "" : cache_dir + "/" + CacheFileName(e, grid, p);
  if (!path.empty()) {
    std::ifstream in(path);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      json j = json::parse(ss.str(), nullptr, false);
      const bool usable = !j.is_discarded() && j.is_object() && j.value("key", "") == key &&
                          j.contains("buckets") && j["buckets"].is_array() &&
                          j["buckets"].size() == t.buckets.size();
      if (usable) {
        for (std::size_t b = 0; b < t.buckets.size(); ++b) {
          const json& r = j["buckets"][b];
          BucketCapacity& c = t.buckets[b];
          c.profiled = r.value("profiled", false);
          c.prompt = r.value("prompt", 0);
          c.output = r.value("output", 0);
          c.capacity_rps = r.value("capacity_rps", 0.0);
          c.lone_ttft_s = r.value("lone_ttft_s", 0.0);
          c.lone_tpot_s = r.value("lone_tpot_s", 0.0);
        }
      } else if (progress != nullptr) {
        *progress << fmt::format("{}: not a profile for this key; profiling again\n", path);
      }
    }
  }
  bool changed = false;
  int todo = 0, done = 0;
  for (std::size_t b = 0; b < t.buckets.size(); ++b) todo += needed[b] && !t.buckets[b].profiled;
  for (std::size_t b = 0; b < t.buckets.size(); ++b) {
    if (!needed[b] || t.buckets[b].profiled) continue;
    int prompt = 0, output = 0;
    ProbeLengths(grid, static_cast<int>(b), e.model.max_context, &prompt, &output);
    SEEDANCE_ASSIGN_OR_RETURN(t.buckets[b], MeasureBucket(e, prompt, output, p));
    changed = true;
    ++done;
    if (progress != nullptr) {
      *progress << fmt::format("profile {} {} ({}/{}): {:.3f} req/s\n", e.gpu.name,
                               grid.BucketName(static_cast<int>(b)), done, todo, t.buckets[b].capacity_rps);
    }
  }
  if (changed && !path.empty()) {
    json j;
    j["key"] = key;
    j["buckets"] = json::array();
    for (const BucketCapacity& c : t.buckets) {
      j["buckets"].push_back({{"profiled", c.profiled}, {"prompt", c.prompt}, {"output", c.output},
                              {"capacity_rps", c.capacity_rps}, {"lone_ttft_s", c.lone_ttft_s},
                              {"lone_tpot_s", c.lone_tpot_s}});
    }
    SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(cache_dir));
    SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(path, j.dump(1) + "\n"));
  }
  return t;
}

}  // namespace seedance::planner
