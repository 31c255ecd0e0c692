#include "seedance/report/batching_report.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/file_util.h"
#include "seedance/cost/price_table.h"
#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

namespace seedance::report {
namespace {

using batching::BatchingResults;
using batching::PolicyResult;

const char* ColorOf(const std::string& name) {
  if (name == "static") return "#bab0ac";
  if (name == "static-bucketed") return "#9c755f";
  if (name == "triton") return "#f28e2b";
  if (name == "vllm") return "#4e79a7";
  if (name == "seedance-kvtiers") return "#b07aa1";
  return "#59a14f";
}

// Display name: the lossy variant says so wherever it appears.
std::string Label(const std::string& name) {
  return name == "seedance-kvtiers" ? name + " (lossy 4/6-bit KV)" : name;
}

std::string KvDtype(int bits) { return bits == 8 ? "fp8" : "fp16"; }

// The modelling assumptions behind every figure of the run, printed next to them.
std::string Assumptions(const BatchingResults& r) {
  const auto& c = r.config;
  std::string a = fmt::format(
      "KV cache {} for every policy; trace part {}; vLLM knobs [{}], Seedance knobs [{}] (from "
      "{}); ground truth: Vidur profiles ({} points) with per-step lognormal noise sd {:g} and "
      "{:g}% slow steps x{:g}; policies predict with a fit on the {} points",
      KvDtype(c.kv_bits), batching::TracePartName(c.trace_part), r.vllm_knobs.ToString(),
      r.seedance_knobs.ToString(), r.knobs_from,
      c.split_profiles ? "even" : "all", c.noise.sigma, 100 * c.noise.slow_prob,
      c.noise.slow_factor, c.split_profiles ? "odd" : "same");
  if (r.lengths_only) {
    a += fmt::format("; arrivals are Poisson ({} requests, seed {})", c.lengths_count, c.seed);
  }
  return a;
}

nlohmann::json PolicyJson(const PolicyResult& p) {
  nlohmann::json classes = nlohmann::json::object();
  for (int c = 0; c < batching::kNumQosClasses; ++c) {
    const auto& k = p.per_class[static_cast<std::size_t>(c)];
    classes[std::string(batching::QosName(static_cast<batching::QosClass>(c)))] = {
        {"requests", k.requests}, {"finished", k.finished}, {"met", k.met},
        {"slo_attainment", k.attainment}};
  }
  return {{"name", p.name},
          {"goodput_rps", p.goodput_rps},
          {"slo_attainment", p.slo_attainment},
          {"throughput_rps", p.throughput_rps},
          {"tokens_per_s", p.tokens_per_s},
          {"output_tokens_per_s", p.output_tokens_per_s},
          {"ttft_p50_s", p.ttft_p50_s},
          {"ttft_p99_s", p.ttft_p99_s},
          {"tpot_p50_s", p.tpot_p50_s},
          {"tpot_p99_s", p.tpot_p99_s},
          {"usd_per_mtok", p.usd_per_mtok},
          {"requests", p.requests},
          {"servable", p.servable},
          {"finished", p.finished},
          {"met", p.met},
          {"rejected", {{"exceeds_model_context", p.rejected_context},
                        {"exceeds_kv_cache", p.rejected_kv},
                        {"queue_policy", p.rejected_queue}}},
          {"makespan_s", p.makespan_s},
          {"kv_use_mean", p.kv_use_mean},
          {"kv_use_peak", p.kv_use_peak},
          {"preemptions", p.preemptions},
          {"kv_compressions", p.kv_compressions},
          {"recomputed_tokens", p.recomputed_tokens},
          {"padding_share", p.padding_share},
          {"lowbit_kv_request_share", p.lowbit_kv_share},
          {"lowbit_kv_token_share", p.lowbit_kv_token_share},
          {"steps", p.steps},
          {"per_class", classes}};
}

std::string Pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string PolicyRows(const std::vector<PolicyResult>& v, bool per_class) {
  std::string rows;
  for (const auto& p : v) {
    rows += fmt::format(
        "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{:.2f}</td>"
        "<td>{}</td><td>{:.2f}</td><td>{:.2f} / {:.2f}</td><td>{:.0f} / {:.0f}</td>",
        ColorOf(p.name), HtmlEscape(Label(p.name)), p.goodput_rps, Pct(p.slo_attainment),
        p.throughput_rps, p.ttft_p50_s, p.ttft_p99_s, 1e3 * p.tpot_p50_s, 1e3 * p.tpot_p99_s);
    if (per_class) {
      for (const auto& c : p.per_class) rows += fmt::format("<td>{}</td>", Pct(c.attainment));
      rows += fmt::format("<td>{}</td>", p.per_class[2].finished);
    } else {
      rows += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>${:.3f}</td>", Pct(p.kv_use_mean),
                          p.preemptions, Pct(p.padding_share), p.usd_per_mtok);
    }
    rows += "</tr>\n";
  }
  return rows;
}

const PolicyResult* Find(const std::vector<PolicyResult>& v, const std::string& name) {
  for (const auto& p : v) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

Status AttachGpuPrice(batching::BatchingConfig& config, const std::string& prices_path) {
  SEEDANCE_ASSIGN_OR_RETURN(batching::GpuSpec gpu, batching::FindGpu(config.gpu));
  const std::string path = prices_path.empty() ? cost::BundledPriceTablePath() : prices_path;
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable table, cost::PriceTable::LoadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(cluster::GpuModelIndex model, cluster::ParseGpuModel(gpu.price_model));
  const cost::GpuPrice* price = table.Find(model);
  if (price == nullptr) {
    return NotFoundError(fmt::format("{}: no price for GPU model {}", path, gpu.price_model));
  }
  config.usd_per_gpu_hour = static_cast<double>(price->usd_per_gpu_hour.raw()) / 1e6;
  config.price_source = fmt::format("{} {} ${:.2f}/GPU-hour ({})", path, gpu.price_model,
                                    config.usd_per_gpu_hour, price->source);
  return Status::Ok();
}

std::string BatchingJson(const BatchingResults& r) {
  nlohmann::json j;
  const auto& c = r.config;
  j["trace"] = {{"name", r.trace_name}, {"requests", r.trace_requests},
                {"rate_rps_at_scale_1", r.trace_rate_rps}};
  j["setup"] = {{"gpu", c.gpu}, {"model", c.model}, {"precision", c.precision},
                {"slo_ttft_s", c.slo_ttft_s}, {"slo_tpot_s", c.slo_tpot_s},
                {"rate_scale", r.headline_scale}, {"rate_rps", r.trace_rate_rps * r.headline_scale},
                {"usd_per_gpu_hour", c.usd_per_gpu_hour}, {"price_source", c.price_source},
                {"kv_capacity_gib", r.kv_capacity_bytes / (1 << 30)},
                {"gpu_memory_utilization", c.gpu_memory_utilization},
                {"kv_dtype", KvDtype(c.kv_bits)},
                {"vllm_knobs", r.vllm_knobs.ToString()},
                {"seedance_knobs", r.seedance_knobs.ToString()},
                {"knobs_from", r.knobs_from},
                {"trace_part", batching::TracePartName(c.trace_part)},
                {"step_noise", {{"lognormal_sd", c.noise.sigma}, {"slow_step_probability", c.noise.slow_prob},
                                {"slow_step_factor", c.noise.slow_factor}, {"seed", c.seed}}},
                {"truth_profile_points", c.split_profiles ? "even" : "all"},
                {"predictor_profile_points", c.split_profiles ? "odd" : "all"},
                {"poisson_arrivals", r.lengths_only}};
  j["policies"] = nlohmann::json::array();
  for (const auto& p : r.policies) j["policies"].push_back(PolicyJson(p));
  j["multi_tenant"] = nlohmann::json::array();
  for (const auto& p : r.mix) j["multi_tenant"].push_back(PolicyJson(p));
  if (!r.ablation.empty()) {
    j["ablation"] = {{"vllm_capacity_rps", r.ablation_vllm_capacity_rps}, {"rows", nlohmann::json::array()}};
    for (const auto& a : r.ablation) {
      j["ablation"]["rows"].push_back({{"mechanism", a.mechanism}, {"on", a.on},
                                       {"capacity_rps", a.capacity_rps},
                                       {"share_of_gain", a.share_of_gain}});
    }
  }
  if (!r.knob_sweep.empty()) {
    j["knob_sweep"] = nlohmann::json::array();
    for (const auto& k : r.knob_sweep) {
      j["knob_sweep"].push_back(
          {{"policy", k.policy}, {"max_num_batched_tokens", k.knobs.max_num_batched_tokens},
           {"max_num_seqs", k.knobs.max_num_seqs}, {"chunked_prefill", k.knobs.chunked_prefill},
           {"preemption", k.knobs.preemption == batching::PreemptionMode::kSwap ? "swap" : "recompute"},
           {"capacity_rps", k.capacity_rps}});
    }
    for (const std::string policy : {"vllm", "seedance"}) {
      if (const batching::KnobPoint* best = batching::BestKnobPoint(r.knob_sweep, policy, r.knob_grid)) {
        j["knob_best"][policy] = {{"knobs", best->knobs.ToString()},
                                  {"capacity_rps", best->capacity_rps},
                                  {"at_grid_edge", batching::AtGridEdge(best->knobs, r.knob_grid)}};
      }
    }
  }
  if (!r.sweep.empty()) {
    nlohmann::json s;
    s["vllm_90_rate_rps"] = r.vllm_90_scale * r.trace_rate_rps;
    s["capacity_rps"] = nlohmann::json::object();
    for (std::size_t k = 0; k < r.policies.size() && k < r.capacity_rps.size(); ++k) {
      s["capacity_rps"][r.policies[k].name] = r.capacity_rps[k];
    }
    s["points"] = nlohmann::json::array();
    for (const auto& pt : r.sweep) {
      nlohmann::json row = {{"rate_scale", pt.rate_scale}, {"rate_rps", pt.rate_rps}};
      for (std::size_t k = 0; k < r.policies.size() && k < pt.attainment.size(); ++k) {
        row["slo_attainment"][r.policies[k].name] = pt.attainment[k];
        row["goodput_rps"][r.policies[k].name] = pt.goodput_rps[k];
      }
      s["points"].push_back(row);
    }
    j["sweep"] = s;
  }
  nlohmann::json front = nlohmann::json::array();
  for (const auto& p : r.pareto) {
    front.push_back({{"batch", p.batch}, {"tokens_per_s", p.throughput}, {"step_s", p.latency_s},
                     {"memory_gib", p.memory_bytes / (1 << 30)}, {"on_front", p.on_front},
                     {"feasible", p.feasible}});
  }
  j["pareto"] = {{"context_tokens", r.pareto_context},
                 {"chosen_batch", r.pareto_choice >= 0 ? r.pareto[static_cast<std::size_t>(r.pareto_choice)].batch : 0},
                 {"points", front}};
  nlohmann::json seed = nlohmann::json::array();
  for (const auto& p : r.seed_table) {
    seed.push_back({{"batch", p.batch}, {"throughput_rps", p.throughput}, {"latency_s", p.latency_s},
                    {"memory_gib", p.memory_bytes / (1 << 30)}, {"feasible", p.feasible}});
  }
  j["seed_table"] = {{"memory_cap_gib", 4}, {"latency_slo_s", 0.05},
                     {"chosen_batch", r.seed_choice >= 0 ? r.seed_table[static_cast<std::size_t>(r.seed_choice)].batch : 0},
                     {"points", seed}};
  j["model_fit"] = {{"linear_holdout_median_error", r.linear_holdout_error},
                    {"decode_attention_median_error", r.decode_fit_error},
                    {"prefill_attention_median_error", r.prefill_fit_error},
                    {"vidur_planner_max_batch_4k", r.vidur_max_batch_4k}};
  return j.dump(2) + "\n";
}

std::string BatchingHtmlSection(const BatchingResults& r) {
  std::string h = "<section class=\"batching\">\n<h2>Inference batching</h2>\n";
  const auto& c = r.config;
  h += fmt::format(
      "<p class=\"sub\">{} ({} requests) at {:.2f} req/s (rate x{:.3f}); {} {} on {}; SLO TTFT "
      "{:g} s, TPOT {:g} ms; price {}.</p>\n",
      HtmlEscape(r.trace_name), r.trace_requests, r.trace_rate_rps * r.headline_scale,
      r.headline_scale, HtmlEscape(c.model), HtmlEscape(c.precision), HtmlEscape(c.gpu),
      c.slo_ttft_s, 1e3 * c.slo_tpot_s, HtmlEscape(c.price_source));
  const PolicyResult* vllm = Find(r.policies, "vllm");
  const PolicyResult* sd = Find(r.policies, "seedance");
  if (vllm != nullptr && sd != nullptr && vllm->goodput_rps > 0) {
    h += fmt::format("<p class=\"headline\">At equal KV precision ({}): Seedance goodput {:.2f} "
                     "req/s = {:.2f}x vLLM at its best swept knobs",
                     KvDtype(c.kv_bits), sd->goodput_rps, sd->goodput_rps / vllm->goodput_rps);
    if (r.capacity_rps.size() == r.policies.size() && !r.capacity_rps.empty()) {
      for (std::size_t k = 0; k < r.policies.size(); ++k) {
        if (r.policies[k].name == "vllm" && r.capacity_rps[k] > 0) {
          for (std::size_t m = 0; m < r.policies.size(); ++m) {
            if (r.policies[m].name == "seedance") {
              h += fmt::format("; rate sustained at &ge;90% SLO attainment {:.2f} vs {:.2f} req/s "
                               "({:.2f}x)", r.capacity_rps[m], r.capacity_rps[k],
                               r.capacity_rps[m] / r.capacity_rps[k]);
            }
          }
        }
      }
    }
    h += "</p>\n";
  }
  h += "<p class=\"sub\">Assumes: " + HtmlEscape(Assumptions(r)) +
       ". seedance-kvtiers keeps cold KV at 4/6 bits (lossy; dequantization timed) and never "
       "carries the headline.</p>\n";
  h += "<table><tr><th>policy</th><th>goodput req/s</th><th>SLO attainment</th><th>req/s</th>"
       "<th>TTFT p50 / p99 s</th><th>TPOT p50 / p99 ms</th><th>KV use</th><th>preemptions</th>"
       "<th>padding</th><th>$/Mtok</th></tr>\n";
  h += PolicyRows(r.policies, false);
  h += "</table>\n";
  if (!r.policies.empty()) {
    h += fmt::format("<p>Requests longer than the model's context ({} of them) are rejected with "
                     "that reason and counted, not served; attainment is over the {} servable "
                     "requests.</p>\n", r.policies[0].rejected_context, r.policies[0].servable);
  }
  if (!r.ablation.empty()) {
    h += fmt::format("<h3>Ablation: each mechanism toggled (rate at &ge;90% attainment; vLLM "
                     "{:.2f} req/s)</h3>\n<table><tr><th>Seedance</th><th>req/s</th>"
                     "<th>share of the gain</th></tr>\n", r.ablation_vllm_capacity_rps);
    for (const auto& a : r.ablation) {
      const std::string what = a.mechanism == "all" ? "as defaulted"
                               : fmt::format("{} {}", a.on ? "with" : "without", a.mechanism);
      h += fmt::format("<tr><td>{}</td><td>{:.2f}</td><td>{}</td></tr>\n", HtmlEscape(what),
                       a.capacity_rps, a.on || a.mechanism == "all" ? "" : Pct(a.share_of_gain));
    }
    h += "</table>\n";
  }
  if (!r.mix.empty()) {
    h += "<h3>Multi-tenant mix (guaranteed 20%, burstable 30%, best-effort 50%)</h3>\n"
         "<table><tr><th>policy</th><th>goodput req/s</th><th>SLO attainment</th><th>req/s</th>"
         "<th>TTFT p50 / p99 s</th><th>TPOT p50 / p99 ms</th><th>guaranteed</th><th>burstable</th>"
         "<th>best-effort</th><th>best-effort finished</th></tr>\n";
    h += PolicyRows(r.mix, true);
    h += "</table>\n";
  }
  // Pareto front: throughput vs step latency, and memory per batch size.
  std::vector<ChartSeries> front(2);
  front[0].name = "decode step (all batch sizes)";
  front[0].color = "#bab0ac";
  front[1].name = "within memory cap and TPOT SLO";
  front[1].color = "#59a14f";
  ChartSeries mem{"memory (weights + KV)", {}, "#4e79a7"};
  for (const auto& p : r.pareto) {
    front[0].points.push_back({1e3 * p.latency_s, p.throughput});
    if (p.feasible) front[1].points.push_back({1e3 * p.latency_s, p.throughput});
    mem.points.push_back({static_cast<double>(p.batch), p.memory_bytes / (1 << 30)});
  }
  LineChartSpec spec;
  spec.id = "pareto";
  spec.title = fmt::format("Pareto front: decode throughput vs step latency (context {:.0f} tokens; "
                           "chosen batch {})", r.pareto_context,
                           r.pareto_choice >= 0 ? r.pareto[static_cast<std::size_t>(r.pareto_choice)].batch : 0);
  spec.x.label = "step latency (ms)";
  spec.y.label = "tokens/s";
  h += "<h3>Pareto batch size</h3>\n" + RenderLineChart(spec, front);
  LineChartSpec mspec;
  mspec.id = "pareto_memory";
  mspec.title = "Memory per batch size";
  mspec.x.label = "batch size";
  mspec.y.label = "GiB";
  h += RenderLineChart(mspec, {mem});
  if (!r.sweep.empty()) {
    std::vector<ChartSeries> lines;
    for (std::size_t k = 0; k < r.policies.size(); ++k) {
      ChartSeries s{r.policies[k].name, {}, ColorOf(r.policies[k].name)};
      for (const auto& pt : r.sweep) s.points.push_back({pt.rate_rps, 100 * pt.attainment[k]});
      lines.push_back(std::move(s));
    }
    LineChartSpec sspec;
    sspec.id = "sweep";
    sspec.title = fmt::format("Rate sweep: SLO attainment (vLLM-style reaches 90% at {:.2f} req/s)",
                              r.vllm_90_scale * r.trace_rate_rps);
    sspec.x.label = "request rate (req/s)";
    sspec.y.label = "requests within SLO (%)";
    sspec.y.min = 0;
    sspec.y.max = 100;
    h += "<h3>Rate sweep</h3>\n" + RenderLineChart(sspec, lines);
  }
  h += fmt::format("<p>Model fit: linear layers reproduce held-out token counts within {:.1f}% "
                   "(median); attention fits {:.1f}% (decode) / {:.1f}% (prefill); Vidur's planner "
                   "gives {} concurrent 4k-token requests.</p>\n</section>\n",
                   100 * r.linear_holdout_error, 100 * r.decode_fit_error,
                   100 * r.prefill_fit_error, r.vidur_max_batch_4k);
  return h;
}

std::string BatchingReportHtml(const BatchingResults& r) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<title>Seedance inference batching</title><style>\n"
         "body{font-family:system-ui,sans-serif;color:#1d1d1f;background:#fafafa;margin:0}"
         "main{max-width:1040px;margin:0 auto;padding:24px 28px;background:#fff}"
         "table{border-collapse:collapse;width:100%;font-size:14px}"
         "th,td{padding:5px 8px;border-bottom:1px solid #e6e6e6;text-align:right}"
         "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}"
         ".headline{font-size:20px;font-weight:600;background:#eef6ec;border-left:6px solid #59a14f;"
         "padding:10px 14px}.sub{color:#555}.swatch{display:inline-block;width:10px;height:10px;"
         "margin-right:6px}\n</style></head><body><main>\n<h1>Seedance inference batching</h1>\n" +
         BatchingHtmlSection(r) + "</main></body></html>\n";
}

std::string FormatBatchingTable(const BatchingResults& r) {
  std::string t = fmt::format(
      "{} at {:.2f} req/s (x{:.3f}), {} {} on {}, SLO TTFT {:g}s TPOT {:g}ms\n",
      r.trace_name, r.trace_rate_rps * r.headline_scale, r.headline_scale, r.config.model,
      r.config.precision, r.config.gpu, r.config.slo_ttft_s, 1e3 * r.config.slo_tpot_s);
  auto table = [&](const std::vector<PolicyResult>& v) {
    t += fmt::format("{:<17}{:>8}{:>8}{:>7}{:>8}{:>8}{:>8}{:>8}{:>7}{:>7}{:>7}{:>6}{:>7}{:>7}{:>7}{:>8}\n",
                     "policy", "goodput", "attain", "req/s", "tok/s", "TTFT50", "TTFT99", "TPOT50",
                     "TPOT99", "guar", "burst", "BE", "KV", "preem", "pad", "$/Mtok");
    for (const auto& p : v) {
      t += fmt::format(
          "{:<17}{:>8.2f}{:>8.3f}{:>7.2f}{:>8.0f}{:>8.2f}{:>8.2f}{:>8.3f}{:>7.3f}{:>7.3f}{:>7.3f}"
          "{:>6.3f}{:>7.2f}{:>7}{:>7.3f}{:>8.4f}\n",
          p.name, p.goodput_rps, p.slo_attainment, p.throughput_rps, p.tokens_per_s, p.ttft_p50_s,
          p.ttft_p99_s, p.tpot_p50_s, p.tpot_p99_s, p.per_class[0].attainment,
          p.per_class[1].attainment, p.per_class[2].attainment, p.kv_use_mean, p.preemptions,
          p.padding_share, p.usd_per_mtok);
    }
  };
  table(r.policies);
  t += "assumes: " + Assumptions(r) + "\n";
  if (!r.policies.empty()) {
    t += fmt::format("rejected (prompt + output > {} context): {} of {} requests, with that reason\n",
                     r.config.model, r.policies[0].rejected_context, r.policies[0].requests);
  }
  if (const PolicyResult* kt = Find(r.policies, "seedance-kvtiers")) {
    t += fmt::format("seedance-kvtiers is lossy: {:.1f}% of its decode KV token reads are at 4/6 "
                     "bits ({:.1f}% of its finished requests read some)\n",
                     100 * kt->lowbit_kv_token_share, 100 * kt->lowbit_kv_share);
  }
  if (!r.mix.empty()) {
    t += "multi-tenant mix (guaranteed 20% / burstable 30% / best-effort 50%):\n";
    table(r.mix);
  }
  if (!r.capacity_rps.empty()) {
    t += "rate sustained at >= 90% SLO attainment:";
    for (std::size_t k = 0; k < r.policies.size() && k < r.capacity_rps.size(); ++k) {
      t += fmt::format(" {} {:.2f}", r.policies[k].name, r.capacity_rps[k]);
    }
    t += " req/s\n";
  }
  if (!r.ablation.empty()) {
    t += fmt::format("ablation (rate at >= 90% attainment; vllm {:.2f} req/s):\n",
                     r.ablation_vllm_capacity_rps);
    for (const auto& a : r.ablation) {
      const std::string what = a.mechanism == "all" ? "seedance as defaulted"
                               : fmt::format("{} {}", a.on ? "with" : "without", a.mechanism);
      t += fmt::format("  {:<28}{:>7.2f} req/s", what, a.capacity_rps);
      if (!a.on && a.mechanism != "all") t += fmt::format("  share of the gain {:>6.1f}%", 100 * a.share_of_gain);
      t += "\n";
    }
  }
  if (!r.knob_sweep.empty()) {
    for (const std::string policy : {"vllm", "seedance", "vllm-swap"}) {
      const batching::KnobPoint* best = batching::BestKnobPoint(r.knob_sweep, policy, r.knob_grid);
      if (best == nullptr) continue;
      if (policy == "vllm-swap") {
        t += fmt::format("knob sweep: vllm-swap (labelled variant, not vLLM V1) [{}] {:.2f} req/s\n",
                         best->knobs.ToString(), best->capacity_rps);
        continue;
      }
      const batching::KnobPoint* top = best;
      for (const auto& k : r.knob_sweep) {
        if (k.policy == policy && k.capacity_rps > top->capacity_rps) top = &k;
      }
      const auto edge = [&](const batching::KnobPoint* k) {
        return batching::AtGridEdge(k->knobs, r.knob_grid) ? " AT THE GRID'S EDGE" : "";
      };
      t += fmt::format("knob sweep: {} best [{}]{} {:.2f} req/s over {} settings (top [{}]{} "
                       "{:.2f}; ties within {:g}% go to the setting nearest stock)\n",
                       policy, best->knobs.ToString(), edge(best), best->capacity_rps,
                       r.knob_grid.size(), top->knobs.ToString(), edge(top), top->capacity_rps,
                       100 * batching::kKnobTie);
    }
  }
  return t;
}

Status WriteBatchingOutputs(const BatchingResults& r, const std::string& dir) {
  const std::string json = BatchingJson(r);
  const std::string html = BatchingReportHtml(r);
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir));
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(dir + "/batching.json", json));
  return WriteFileAtomically(dir + "/batching_report.html", html);
}

Result<BundledBatching> RunBundledBatching(std::ostream* progress) {
  batching::BatchingConfig c;
  c.data_dir = DataDir();
  c.sweep = true;
  SEEDANCE_RETURN_IF_ERROR(AttachGpuPrice(c, ""));
  SEEDANCE_ASSIGN_OR_RETURN(batching::BatchingResults r, batching::RunBatching(c, progress));
  BundledBatching out{std::move(r), ""};
  out.html_section = BatchingHtmlSection(out.results);
  return out;
}

}  // namespace seedance::report
