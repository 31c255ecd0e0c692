// seedance batching: compares the inference batchers (static, static-bucketed, Triton dynamic
// batcher, vLLM-style continuous batching, Seedance) on an LLM request trace in simulated time;
// prints a per-policy table and writes batching.json and batching_report.html.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/report/batching_report.h"

namespace seedance::cli {
namespace {

struct BatchingOptions {
  std::string trace;
  std::string trace_part = "all";
  std::string gpu = "a100";
  std::string model = "llama-2-7b";
  std::string precision = "fp16";
  std::string policies = "all";
  std::string slo_ttft = "2s";
  std::string slo_tpot = "100ms";
  double rate_scale = 1.0;
  std::string out = "seedance-batching";
  std::string prices;
  std::string oversize = "reject";
  bool sweep = false;
  bool no_mix = false;
  std::string kv_dtype = "fp16";
  double noise_sd = batching::DefaultStepNoise().sigma;
  double slow_step_prob = batching::DefaultStepNoise().slow_prob;
  double slow_step_factor = batching::DefaultStepNoise().slow_factor;
  bool exact_predictor = false;
  bool ablation = false;
  bool sweep_knobs = false;
  bool stock_knobs = false;
  std::uint64_t seed = 42;
};

int RunBatchingCommand(const BatchingOptions& o) {
  batching::BatchingConfig c;
  c.data_dir = DataDir();
  c.trace_path = o.trace;
  c.gpu = o.gpu;
  c.model = o.model;
  c.precision = o.precision;
  c.policies = SplitCommaList(o.policies);
  c.rate_scale = o.rate_scale;
  c.sweep = o.sweep;
  c.multi_tenant = !o.no_mix;
  c.ablation = o.ablation;
  c.knob_sweep = o.sweep_knobs;
  c.use_best_knobs = !o.stock_knobs;
  c.split_profiles = !o.exact_predictor;
  c.seed = o.seed;
  c.noise.sigma = o.noise_sd;
  c.noise.slow_prob = o.slow_step_prob;
  c.noise.slow_factor = o.slow_step_factor;
  auto part = batching::ParseTracePart(o.trace_part);
  if (!part.has_value()) return ReportError(InvalidArgumentError("--trace-part: " + part.error().message()));
  c.trace_part = *part;
  if (o.kv_dtype == "fp16" || o.kv_dtype == "fp8") {
    c.kv_bits = o.kv_dtype == "fp8" ? 8 : 16;
  } else {
    return ReportError(InvalidArgumentError(
        fmt::format("--kv-dtype '{}': expected fp16 or fp8", o.kv_dtype)));
  }
  if (c.ablation && !c.sweep) {
    return ReportError(InvalidArgumentError("--ablation needs --sweep (it measures sustained rates)"));
  }
  auto ttft = ParseFlagDuration(o.slo_ttft, "--slo-ttft");
  if (!ttft.has_value()) return ReportError(ttft.error());
  auto tpot = ParseFlagDuration(o.slo_tpot, "--slo-tpot");
  if (!tpot.has_value()) return ReportError(tpot.error());
  c.slo_ttft_s = *ttft;
  c.slo_tpot_s = *tpot;
  if (o.oversize == "reject") {
    c.oversize = batching::OversizePolicy::kReject;
  } else if (o.oversize == "error") {
    c.oversize = batching::OversizePolicy::kError;
  } else {
    return ReportError(InvalidArgumentError(
        fmt::format("--oversize '{}': expected reject or error", o.oversize)));
  }
  if (Status s = report::AttachGpuPrice(c, o.prices); !s.ok()) return ReportError(s);
  auto result = batching::RunBatching(c, &std::cerr);
  if (!result.has_value()) return ReportError(result.error());
  std::cout << report::FormatBatchingTable(*result);
  if (Status s = report::WriteBatchingOutputs(*result, o.out); !s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/batching.json and " << o.out << "/batching_report.html\n";
  return kExitOk;
}

}  // namespace

Action RegisterBatching(CLI::App& app) {
  auto o = std::make_shared<BatchingOptions>();
  CLI::App* cmd = AddCommand(
      app, "batching", "Compare LLM inference batchers on a request trace",
      "Static, static-bucketed, Triton-style, vLLM-style and Seedance continuous batching, with a "
      "latency model fitted from measured profiles; writes batching.json and "
      "batching_report.html in --out. Default: the bundled Azure LLM conversation trace (19,366 requests, 1 h), Llama-2-7B "
      "FP16 on one A100-80GB (Vidur profiles), priced from data/prices/gpu_prices.csv. "
      "Fair by construction: every policy gets the same KV precision (--kv-dtype), vLLM and "
      "Seedance run at the best knobs of their own sweep over the same grid, chosen per trace "
      "(conv, code) and KV precision on the trace's tuning half (--trace-part tuning "
      "--sweep-knobs re-runs it); report capacity on the held-out half (--trace-part held-out). "
      "Other traces (arxiv, a file) get the conversation trace's knobs. The replay times steps "
      "with a noisy ground truth fitted on half of the profile points while the policies predict "
      "with a fit on the other half. seedance-kvtiers (lossy 4/6-bit cold KV) is a labelled "
      "variant. "
      "Requests longer than the model's context are rejected with that reason and counted "
      "(--oversize error fails instead). Bad input exits with code 2 naming file:line and field; "
      "nothing is written then. Progress goes to stderr.",
      "seedance batching --out seedance-batching");
  cmd->add_option("--trace", o->trace,
                  "conv (default; the tuning trace), code or arxiv (held out), or a CSV: "
                  "TIMESTAMP,ContextTokens,GeneratedTokens[,qos,tenant] (Azure format) or "
                  "num_prefill_tokens,num_decode_tokens (lengths only: Poisson arrivals)");
  cmd->add_option("--trace-part", o->trace_part,
                  "all | tuning | held-out: the whole trace, its first half of requests in arrival "
                  "order (where knobs are chosen) or its second half (where they are judged)")
      ->capture_default_str();
  cmd->add_option("--gpu", o->gpu, "a100 | h100 | l4 | a10g (l4, a10g: derived from the A100 profile)")->capture_default_str();
  cmd->add_option("--model", o->model,
                  "model on one GPU: llama-2-7b, phi-2, codellama-34b (A100/H100), llama-3-8b (A100); larger ones: "
                  "seedance plan --tp")
      ->capture_default_str();
  cmd->add_option("--precision", o->precision, "fp16 | fp8 | int8 | int4")->capture_default_str();
  cmd->add_option("--policies", o->policies,
                  "all, or a comma list of static, static-bucketed, triton, vllm, seedance, "
                  "seedance-kvtiers")
      ->capture_default_str();
  cmd->add_option("--kv-dtype", o->kv_dtype, "fp16 | fp8: KV cache precision for every policy")
      ->capture_default_str();
  cmd->add_option("--slo-ttft", o->slo_ttft, "time-to-first-token SLO")->capture_default_str();
  cmd->add_option("--slo-tpot", o->slo_tpot, "time-per-output-token SLO")->capture_default_str();
  cmd->add_option("--rate-scale", o->rate_scale, "arrival rate multiplier")->capture_default_str();
  cmd->add_option("--out", o->out, "output directory (created if missing)")->capture_default_str();
  cmd->add_option("--prices", o->prices, "GPU price CSV (default: the bundled one)");
  cmd->add_option("--oversize", o->oversize, "reject | error: requests longer than the context")
      ->capture_default_str();
  cmd->add_flag("--sweep", o->sweep,
                "sweep the rate, find where vllm attains 90% of requests within SLO, and report "
                "there (and each policy's sustainable rate)");
  cmd->add_flag("--no-mix", o->no_mix, "skip the multi-tenant QoS mix");
  cmd->add_flag("--ablation", o->ablation,
                "with --sweep: Seedance's sustained rate with each mechanism toggled");
  cmd->add_flag("--sweep-knobs", o->sweep_knobs,
                "sweep vLLM's and Seedance's engine knobs over the same grid (token budget "
                "128-8192, max sequences 16-512, chunked prefill on/off; recompute preemption, "
                "plus vLLM's best with swap as a labelled variant); slow: 103 sustained-rate "
                "searches");
  cmd->add_flag("--stock-knobs", o->stock_knobs,
                "run vLLM and Seedance at vLLM's stock defaults instead of their swept knobs for the trace and KV precision");
  cmd->add_option("--noise-sd", o->noise_sd, "ground truth: log-sd of the per-step time noise")
      ->capture_default_str();
  cmd->add_option("--slow-step-prob", o->slow_step_prob, "ground truth: probability of a slow step")
      ->capture_default_str();
  cmd->add_option("--slow-step-factor", o->slow_step_factor, "ground truth: a slow step's time factor")
      ->capture_default_str();
  cmd->add_flag("--exact-predictor", o->exact_predictor,
                "reference only: policies predict with the ground truth's own fit (no noise split)");
  cmd->add_option("--seed", o->seed, "seed of the noise, the Poisson arrivals and the tenant mix")
      ->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? RunBatchingCommand(*o) : -1; };
}

}  // namespace seedance::cli
