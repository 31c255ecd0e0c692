#include "seedance/advise/serving.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "seedance/batching/benchmark.h"
#include "seedance/batching/model.h"
#include "seedance/cluster/gpu_model.h"

namespace seedance::advise {
namespace {

Result<ServingPoint> Measure(std::string change, const ServingDeployment& d, std::ostream* progress) {
  ServingPoint p;
  p.change = std::move(change);
  p.config = d;
  SEEDANCE_ASSIGN_OR_RETURN(batching::GpuSpec gpu, batching::FindGpu(d.gpu));
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable table, cost::PriceTable::LoadFile(cost::BundledPriceTablePath()));
  SEEDANCE_ASSIGN_OR_RETURN(cluster::GpuModelIndex model, cluster::ParseGpuModel(gpu.price_model));
  const cost::GpuPrice* price = table.Find(model);
  if (price == nullptr) return NotFoundError("no price for GPU model " + gpu.price_model);
  p.usd_per_gpu_hour = ToUsd(price->usd_per_gpu_hour);
  for (std::uint64_t seed : d.seeds) {
    batching::BatchingConfig c;
    c.data_dir = d.data_dir;
    c.trace_path = batching::ResolveTracePath(d.data_dir, d.trace);
    c.gpu = d.gpu;
    c.kv_bits = d.kv_bits;
    c.policies = {"vllm"};
    c.sweep = true;
    c.multi_tenant = false;
    c.seed = seed;
    c.usd_per_gpu_hour = p.usd_per_gpu_hour;
    if (d.max_num_seqs > 0) {
      c.use_best_knobs = false;
      batching::EngineKnobs k =
          batching::TunedKnobsFor(batching::BundledTraceName(d.data_dir, d.trace), d.kv_bits).vllm;
      k.max_num_seqs = d.max_num_seqs;
      k.ApplyTo(&c.settings.vllm);
    }
    if (progress != nullptr) *progress << "serving what-if: " << p.change << ", seed " << seed << "\n";
    SEEDANCE_ASSIGN_OR_RETURN(batching::BatchingResults r, batching::RunBatching(c, nullptr));
    double cap = r.capacity_rps.empty() ? 0.0 : r.capacity_rps[0];
    p.demand_rps = r.trace_rate_rps;
    p.capacity_rps.push_back(cap);
    p.usd_per_month.push_back(cap > 0 ? r.trace_rate_rps / cap * p.usd_per_gpu_hour * kHoursPerMonth : 0.0);
  }
  return p;
}

}  // namespace

Result<ServingWhatIf> RunServingWhatIf(const ServingDeployment& d, std::ostream* progress) {
  if (d.seeds.empty()) return InvalidArgumentError("serving what-if: no seed");
  if (d.kv_bits != 16 && d.kv_bits != 8) return InvalidArgumentError("serving what-if: KV bits must be 16 or 8");
  ServingWhatIf out;
  SEEDANCE_ASSIGN_OR_RETURN(ServingPoint base, Measure("as deployed", d, progress));
  out.demand_rps = base.demand_rps;
  out.points.push_back(std::move(base));
  std::vector<std::pair<std::string, ServingDeployment>> variants;
  ServingDeployment v = d;
  v.gpu = d.gpu == "a100" ? "h100" : "a100";
  variants.push_back({"gpu " + v.gpu, v});
  if (d.kv_bits == 16) {
    v = d;
    v.kv_bits = 8;
    variants.push_back({"kv fp8", v});
  }
  for (int cap : {64, 128, 512}) {
    if (cap == d.max_num_seqs) continue;
    v = d;
    v.max_num_seqs = cap;
    variants.push_back({fmt::format("batch cap {}", cap), v});
  }
  for (const auto& [name, cfg] : variants) {
    SEEDANCE_ASSIGN_OR_RETURN(ServingPoint p, Measure(name, cfg, progress));
    out.points.push_back(std::move(p));
  }
  return out;
}

std::vector<Finding> ServingFindings(const ServingWhatIf& w, const std::string& name,
                                     const std::string& reproduce_prefix) {
  std::vector<Finding> out;
  if (w.points.empty()) return out;
  const ServingPoint& base = w.points[0];
  for (std::size_t i = 1; i < w.points.size(); ++i) {
    const ServingPoint& p = w.points[i];
    if (p.usd_per_month.empty() || p.usd_per_month[0] <= 0 || base.usd_per_month[0] <= 0) continue;
    double saving = base.usd_per_month[0] - p.usd_per_month[0];
    if (saving <= 0) continue;
    Finding f;
    f.kind = "serving";
    f.target = "deployment/" + name;
    std::string key = p.change;
    std::replace(key.begin(), key.end(), ' ', '-');
    f.id = "serving:" + key;
    f.usd_per_month = saving;
    f.ci_low = f.ci_high = saving;
    for (std::size_t s = 0; s < p.usd_per_month.size() && s < base.usd_per_month.size(); ++s) {
      double x = base.usd_per_month[s] - p.usd_per_month[s];
      f.ci_low = std::min(f.ci_low, x);
      f.ci_high = std::max(f.ci_high, x);
    }
    f.ci_basis = fmt::format("min .. max over the batching engine's noise seeds ({} seeds)", p.usd_per_month.size());
    f.evidence.samples = static_cast<std::int64_t>(p.capacity_rps.size() + base.capacity_rps.size());
    f.evidence.samples_unit = "rate sweeps";
    f.evidence.from = "trace " + base.config.trace;
    f.evidence.to = fmt::format("{:.2f} req/s demand", w.demand_rps);
    f.evidence.detail = fmt::format(
        "vLLM sustains {:.2f} req/s per GPU at >= 90% SLO attainment as deployed ({} at ${:.2f}/h) and "
        "{:.2f} with {} (${:.2f}/h): {:.3f} -> {:.3f} GPUs for the demand",
        base.capacity_rps[0], base.config.gpu, base.usd_per_gpu_hour, p.capacity_rps[0], p.change,
        p.usd_per_gpu_hour, w.demand_rps / base.capacity_rps[0], w.demand_rps / p.capacity_rps[0]);
    f.action = "change the deployment: " + p.change;
    f.reproduce = reproduce_prefix + " --explain " + f.id;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace seedance::advise
