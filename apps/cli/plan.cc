// seedance plan: the cheapest GPU mix (types and counts, on demand and spot) for an LLM traffic
// trace at its TTFT / TPOT SLOs, from capacities the batching engine measures, verified by
// replaying the trace on the chosen fleet; or Mélange's own input format solved as is.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/report/plan_report.h"

namespace seedance::cli {
namespace {

struct PlanOptions {
  std::string trace = "conv";
  std::string slo_tpot = "120ms";
  std::string slo_ttft = "2s";
  double rate = 0;
  std::string rate_curve;
  std::string cold_start = "180s";
  std::string gpus = "l4,a10g,a100,h100";
  bool spot = false;
  std::string out = "seedance-plan";
  std::string cache;
  std::string grid = "melange";
  int slice_factor = 8;
  std::string policy = "vllm";
  std::string prices;
  std::string fleet;
  std::string melange_config;
  std::string router = "input";
  bool no_verify = false;
  std::uint64_t seed = 42;
  std::string model = "llama-2-7b";
  int tp = 0;
  std::string profile;
  bool gpus_given = false;
  bool tp_given = false;
};

// The planner's "cannot be met" (kFailedPrecondition) is an input problem: exit code 2.
int Report(const Status& s) {
  if (s.code() == StatusCode::kFailedPrecondition) return ReportError(InvalidArgumentError(s.message()));
  return ReportError(s);
}

int RunPlanCommand(const PlanOptions& o) {
  Result<planner::PlanResult> r = InvalidArgumentError("unset");
  if (!o.melange_config.empty()) {
    r = planner::PlanMelange(o.melange_config);
  } else {
    planner::PlanConfig c;
    c.data_dir = DataDir();
    c.trace = o.trace;
    auto tpot = ParseFlagDuration(o.slo_tpot, "--slo-tpot");
    if (!tpot) return Report(tpot.error());
    auto ttft = ParseFlagDuration(o.slo_ttft, "--slo-ttft");
    if (!ttft) return Report(ttft.error());
    c.slo_tpot_s = *tpot;
    c.slo_ttft_s = *ttft;
    if (o.rate < 0) return Report(InvalidArgumentError("--rate must be > 0"));
    c.rate_rps = o.rate;
    if (o.rate > 0 && !o.rate_curve.empty()) return Report(InvalidArgumentError("--rate and --rate-curve exclude each other"));
    c.rate_curve = o.rate_curve;
    auto cold = ParseFlagDuration(o.cold_start, "--cold-start");
    if (!cold) return Report(cold.error());
    c.cold_start_s = *cold;
    if (o.gpus_given) c.gpus = SplitCommaList(o.gpus);  // else every type that can hold the model
    c.model = o.model;
    if (o.tp_given && o.tp < 1) return Report(InvalidArgumentError(fmt::format("--tp {}: must be >= 1", o.tp)));
    c.tp = o.tp_given ? o.tp : 0;  // 0: per GPU type, the smallest degree that holds the model
    c.profile_dir = o.profile;
    c.spot = o.spot;
    c.grid = o.grid;
    if (o.slice_factor < 1) return Report(InvalidArgumentError("--slice-factor must be >= 1"));
    c.slice_factor = o.slice_factor;
    c.policy = o.policy;
    c.prices_path = o.prices;
    c.fleet_path = o.fleet;
    c.cache_dir = o.cache.empty() ? PlanCacheDir() : o.cache;
    c.router = o.router;
    c.verify = !o.no_verify;
    c.seed = o.seed;
    r = planner::Plan(c, &std::cerr);
  }
  if (!r.has_value()) return Report(r.error());
  std::cout << report::FormatPlanTable(*r);
  if (Status s = report::WritePlanOutputs(*r, o.out); !s.ok()) return Report(s);
  std::cout << "wrote " << o.out << "/plan.json and " << o.out << "/plan_report.html\n";
  return kExitOk;
}

}  // namespace

Action RegisterPlan(CLI::App& app) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = AddCommand(
      app, "plan", "Plan the cheapest GPU mix for an LLM trace at its latency SLOs",
      "Buckets the trace by prompt and output length (Mélange's cut points 0, 25, 100, 250, 500, "
      "1000, 2000, the prompt axis continued to the model's context; --grid fine doubles them), "
      "measures each GPU type's sustainable rate per bucket at the SLOs with the batching engine "
      "(--model, FP16, from Vidur's profiles: llama-2-7b, llama-2-70b, codellama-34b, phi-2, llama-3-8b, "
      "llama-3-70b, or your own with "
      "--profile; L4 and A10G derived from the A100 profile by bandwidth and FP16 peak), "
      "cached in --cache, then solves Mélange's allocation ILP exactly (GLPK; identical slices "
      "aggregated) at the price table's prices. Prints the mix, $/h and $ per million tokens, headroom "
      "per type, every single-type baseline and the saving against the best one with the fluid "
      "bound no plan can beat. The plan sees only the trace's tuning half (first half in time; even "
      "rows of a lengths-only trace); the held-out half is replayed on the chosen fleet, routed by "
      "prompt length only (--router), and the SLO attainment it got is reported. --spot adds spot GPUs priced with their availability "
      "(data/spot_traces) and an on-demand reserve that carries the load through the loss of any "
      "one type's spot GPUs, and replays a window of the spot series with a preemption in it. "
      "--melange-config solves an input in Mélange's format (gpu_info, workload_distribution, "
      "total_request_rate, slice_factor) with its own tables and prices. Writes plan.json and "
      "plan_report.html in --out. SLOs no GPU meets, unknown GPU types and empty traces exit with "
      "code 2 naming what is infeasible and by how much. Progress goes to stderr.",
      "seedance plan --model llama-2-70b --trace conv --slo-tpot 120ms --gpus a100,h100 --out plan-70b");
  cmd->add_option("--trace", o->trace,
                  "conv or code (Azure LLM traces, arrivals kept), arena (Mélange's Arena lengths, "
                  "Poisson arrivals), or a CSV in either format")
      ->capture_default_str();
  cmd->add_option("--slo-tpot", o->slo_tpot, "time-per-output-token SLO")->capture_default_str();
  cmd->add_option("--slo-ttft", o->slo_ttft, "time-to-first-token SLO")->capture_default_str();
  cmd->add_option("--rate", o->rate, "request rate to plan for, req/s (default: the trace's own; arena: 1)");
  cmd->add_option("--rate-curve", o->rate_curve,
                  "a day's rate curve, CSV start_s,rate_rps: plan the peak and compare a static peak "
                  "fleet with one resized every period");
  cmd->add_option("--cold-start", o->cold_start, "with --rate-curve: boot time billed before a GPU serves")
      ->capture_default_str();
  CLI::Option* gpus = cmd->add_option("--gpus", o->gpus,
                                      "GPU types to mix: l4, a10g, a100, h100 (default: those that can hold --model)");
  cmd->add_option("--model", o->model,
                  "model served (sets the context length and the profiles): llama-2-7b, llama-2-70b, codellama-34b, "
                  "phi-2, llama-3-8b, llama-3-70b (A100 profiles only)")
      ->capture_default_str();
  CLI::Option* tp = cmd->add_option("--tp", o->tp,
                                    "tensor-parallel degree (GPUs per replica) for every type (default: per type, "
                                    "the smallest that holds the FP16 weights + one full-context sequence of KV)");
  cmd->add_option("--profile", o->profile,
                  "compute profiles in Vidur's layout, DIR/<a100|h100>/<org>/<model>/mlp.csv, instead of the "
                  "bundled ones");
  cmd->add_flag("--spot", o->spot, "also buy spot GPUs, with an on-demand reserve for a preemption");
  cmd->add_option("--out", o->out, "output directory (created if missing)")->capture_default_str();
  cmd->add_option("--cache", o->cache, "capacity profile cache (default: $SEEDANCE_CACHE_DIR, else ~/.cache/seedance/plan)");
  cmd->add_option("--grid", o->grid, "melange | fine: request-size buckets")->capture_default_str();
  cmd->add_option("--slice-factor", o->slice_factor, "Mélange's F: slices per bucket")->capture_default_str();
  cmd->add_option("--policy", o->policy, "batching policy every GPU runs (vllm, seedance, ...)")->capture_default_str();
  cmd->add_option("--prices", o->prices, "GPU price CSV (default: the bundled one)");
  cmd->add_option("--fleet", o->fleet,
                  "fleet file: each type at the fleet's price (on-demand pool, else owned TCO / reserved); a type "
                  "the fleet has no pool of is an error (docs/FLEET_FILE.md)");
  cmd->add_option("--melange-config", o->melange_config, "solve a Mélange-format JSON input instead of a trace");
  cmd->add_option("--router", o->router,
                  "router of the burst calibration and the replay: input (prompt length only, what a real "
                  "router knows) or output-oracle (Mélange's: also the true output length, an oracle); "
                  "the held-out replay is also run with the other one for comparison")
      ->capture_default_str();
  cmd->add_flag("--no-verify", o->no_verify, "skip the verification replay");
  cmd->add_option("--seed", o->seed, "seed of the verification replay (noise, Poisson arrivals)")->capture_default_str();
  return [cmd, o, gpus, tp]() {
    if (!cmd->parsed()) return -1;
    o->gpus_given = gpus->count() > 0;
    o->tp_given = tp->count() > 0;
    return RunPlanCommand(*o);
  };
}

}  // namespace seedance::cli
