// seedance advise: what to change, ranked in dollars per month, with the evidence, the interval
// and the command that reproduces each figure. Parses and prints; the rules live in
// src/seedance/advise.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "ledger_prepare.h"
#include "seedance/advise/finding.h"
#include "seedance/advise/fleet.h"
#include "seedance/advise/levers.h"
#include "seedance/advise/serving.h"
#include "seedance/core/file_util.h"
#include "seedance/report/advice_report.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

using Json = nlohmann::json;

struct AdviseOptions {
  LedgerOptions ledger;
  std::string workload;
  int top = 20;
  std::string output = "table";
  std::string out;
  std::string explain;
  bool lever_table = false;
  std::uint64_t seed = 42;
  int mc_samples = 10'000;
  std::string replay_window = "7d";
  std::string ci_seeds = "43,44";
  std::string serving;  // a trace: run the serving what-if
  std::string serving_gpu = "a100";
  std::string serving_kv = "fp16";
  int serving_batch_cap = 0;
  std::string spot_trace = "aws-04-22-2023-preemption_us-west-2b_v100_1.json";
};

// The command that reproduces a figure: the options that shaped it, then --explain.
std::string ReproducePrefix(const AdviseOptions& o) {
  std::string cmd = "seedance advise";
  if (!o.ledger.db.empty()) cmd += " --db " + o.ledger.db;
  if (!o.ledger.fleet.empty()) cmd += " --fleet " + o.ledger.fleet;
  if (!o.ledger.config.empty()) cmd += " --config " + o.ledger.config;
  if (!o.ledger.prices.empty()) cmd += " --prices " + o.ledger.prices;
  if (!o.ledger.from.empty()) cmd += " --from " + o.ledger.from;
  if (!o.ledger.to.empty()) cmd += " --to " + o.ledger.to;
  if (!o.ledger.step.empty()) cmd += " --step " + o.ledger.step;
  if (!o.workload.empty()) {
    cmd += " --workload " + o.workload + " --replay-window " + o.replay_window + " --ci-seeds " +
           (o.ci_seeds.empty() ? std::string("''") : o.ci_seeds);
  }
  if (!o.serving.empty()) {
    cmd += " --serving " + o.serving + " --serving-gpu " + o.serving_gpu + " --serving-kv " + o.serving_kv;
    if (o.serving_batch_cap > 0) cmd += " --serving-batch-cap " + std::to_string(o.serving_batch_cap);
  }
  if (!o.ledger.db.empty() && o.spot_trace != AdviseOptions{}.spot_trace) cmd += " --spot-trace " + o.spot_trace;
  if (o.seed != 42) cmd += " --seed " + std::to_string(o.seed);
  if (o.mc_samples != 10'000) cmd += " --mc-samples " + std::to_string(o.mc_samples);
  return cmd;
}

int RunAdvise(const AdviseOptions& o) {
  if (o.output != "table" && o.output != "json" && o.output != "html") {
    return ReportError(InvalidArgumentError("--output must be table, json or html, got '" + o.output + "'"));
  }
  if (o.ledger.db.empty() && o.workload.empty() && !o.lever_table && o.serving.empty()) {
    return ReportError(InvalidArgumentError(
        "give --db LEDGER, --workload llm-finetune, --serving TRACE or --lever-table"));
  }
  if (o.serving_kv != "fp16" && o.serving_kv != "fp8") {
    return ReportError(InvalidArgumentError("--serving-kv must be fp16 or fp8, got '" + o.serving_kv + "'"));
  }
  if (o.serving_gpu != "a100" && o.serving_gpu != "h100") {
    return ReportError(InvalidArgumentError("--serving-gpu must be a100 or h100, got '" + o.serving_gpu + "'"));
  }
  if (!o.workload.empty() && o.workload != "llm-finetune") {
    return ReportError(InvalidArgumentError("--workload: only llm-finetune has a lever model, got '" +
                                            o.workload + "'"));
  }
  if (o.output == "html" && o.out.empty()) {
    return ReportError(InvalidArgumentError("--output html needs --out FILE"));
  }
  auto window = ParseFlagDuration(o.replay_window, "--replay-window");
  if (!window.has_value()) return ReportError(window.error());
  std::vector<std::uint64_t> ci_seeds;
  if (!o.ci_seeds.empty()) {
    auto s = ParseSeedList(o.ci_seeds, "--ci-seeds");
    if (!s.has_value()) return ReportError(s.error());
    ci_seeds = *s;
  }
  const std::string prefix = ReproducePrefix(o);
  std::vector<advise::Finding> findings;
  std::string price_source;  // the ledger's prices (first line of the output)
  std::optional<advise::OwnedOpportunityReport> opportunity;
  double ledger_total = 0;   // $/month of the ledger's findings
  Json doc = Json::object();
  Json assumptions = Json::array();
  if (!o.ledger.db.empty()) {
    auto prepared = Prepare(o.ledger);
    if (!prepared.has_value()) return ReportError(prepared.error());
    Prepared& p = *prepared;
    auto in = advise::FleetInputsFromLedger(*p.ledger, p.telemetry, p.config, p.from_ms, p.to_ms);
    if (!in.has_value()) return ReportError(in.error());
    advise::FleetRules rules;
    auto pools = FleetPoolsOf(p);
    if (!pools.has_value()) return ReportError(pools.error());
    rules.fleet = pools->get();
    price_source = p.price_source;
    if (rules.fleet != nullptr) {
      auto opp = advise::OwnedOpportunity(*in, *rules.fleet);
      if (!opp.has_value()) return ReportError(opp.error());
      opportunity = *opp;
    }
    const std::string trace =
        o.spot_trace.find('/') == std::string::npos ? DataDir() + "/spot_traces/" + o.spot_trace : o.spot_trace;
    auto rate = advise::SpotInterruptionRateOf(trace);
    if (!rate.has_value()) return ReportError(rate.error());
    rules.spot_rate = *rate;
    rules.seed = o.seed;
    rules.mc_samples = o.mc_samples;
    rules.reproduce_prefix = prefix;
    auto fleet = advise::FleetFindings(*in, p.catalog, p.config, rules);
    if (!fleet.has_value()) return ReportError(fleet.error());
    findings.insert(findings.end(), fleet->begin(), fleet->end());
    for (const auto& f : *fleet) ledger_total += f.usd_per_month;
    doc["ledger"] = {{"db", o.ledger.db},
                     {"from", telemetry::FormatTimestamp(p.from_ms)},
                     {"to", telemetry::FormatTimestamp(in->to_ms)},
                     {"jobs", in->jobs.size()},
                     {"nodes", in->nodes.size()},
                     {"unshared_idle_usd", in->unshared_idle_usd},
                     {"unpriced_gpu_types", p.telemetry.unpriced_models}};
    if (const std::string note = UnpricedNote(p); !note.empty()) assumptions.push_back(note);
    assumptions.push_back(fmt::format(
        "fleet rules: idle below {:.0f}% activity; input-bound at >= {:.0f}% I/O wait ({}) and < {:.0f}% "
        "activity; a smaller GPU must hold peak memory x {:.2f} and cover activity x FP16 TFLOPS at "
        "{:.0f}% of its own; consolidation below {:.0f}% activity; $/month = the range's saving x {:.0f} h "
        "/ range hours; spot for jobs annotated seedance.io/checkpoint-interval and seedance.io/deadline-slack "
        "at {:.3f} interruptions per hour ({}), each losing half the interval + {:.0f} s; unit-cost outliers at >= {:.1f}x their GPU model's median $ per "
        "useful GPU-hour (>= {} jobs), only for jobs no other rule covers",
        100 * rules.idle_activity, 100 * rules.stall_wait, advise::kInputWaitMetric,
        100 * rules.stall_max_activity, rules.memory_margin, 100 * rules.headroom,
        100 * rules.low_activity, advise::kHoursPerMonth, rules.spot_rate.per_hour, rules.spot_rate.trace,
        rules.spot_restart_s, rules.unit_cost_factor, rules.unit_cost_min_jobs));
  }
  advise::LeverParams params;
  advise::TrainingStep step;
  std::vector<advise::LeverTableRow> table;
  std::vector<std::string> notes;
  const advise::SeedImpliedInputs implied = advise::SolveSeedImpliedInputs(step, params);
  std::vector<advise::LeverTableRow> implied_table;
  std::vector<std::string> implied_notes;
  if (o.lever_table || !o.workload.empty()) {
    table = advise::SeedLeverTable(step, params);
    notes = advise::SeedTableDifferences(step, params);
    implied_table = advise::SeedImpliedLeverTable(implied);
    implied_notes = advise::SeedImpliedNotes(step, params, implied);
  }
  Json replay_json = nullptr;
  if (!o.workload.empty()) {
    advise::ReplaySpec rs;
    rs.data_dir = DataDir();
    rs.seed = o.seed;
    rs.duration_s = *window;
    rs.ci_seeds = ci_seeds;
    rs.params = params;
    auto replay = advise::ReplayLevers(rs, [](const std::string& line) { std::cerr << line << "\n"; });
    if (!replay.has_value()) return ReportError(replay.error());
    auto lf = advise::LeverFindings(*replay, prefix);
    findings.insert(findings.end(), lf.begin(), lf.end());
    Json rows = Json::array();
    for (const auto& r : replay->rows) {
      rows.push_back({{"lever", r.name}, {"cost_usd", r.cost_usd}, {"saving_usd", r.saving_usd},
                      {"usd_per_month", r.usd_per_month}, {"ci_low", r.ci_low}, {"ci_high", r.ci_high},
                      {"avg_jct_hours", r.avg_jct_hours}, {"unfinished", r.unfinished}});
    }
    replay_json = {{"workload", replay->workload}, {"jobs", replay->jobs}, {"window_s", replay->window_s},
                   {"policy", "seedance"}, {"seed", o.seed}, {"ci_seeds", ci_seeds},
                   {"baseline_cost_usd", replay->baseline_cost_usd},
                   {"baseline_avg_jct_hours", replay->baseline_avg_jct_hours}, {"levers", rows}};
    assumptions.push_back(
        "levers: mixed precision compute x0.5, activations x0.5; checkpointing activations x 2/sqrt(36), "
        "compute x4/3; 8-bit 1 byte per gradient entry, top-k 1% density with 32-bit indices, +1% compute "
        "to (de)quantize; overlap hides half the exposed all-reduce; a multi-GPU llm-finetune job spends "
        "10% (NVLink) or 25% (PCIe) of a step on exposed all-reduce");
  }
  Json serving_json = nullptr;
  if (!o.serving.empty()) {
    advise::ServingDeployment d;
    d.data_dir = DataDir();
    d.trace = o.serving;
    d.gpu = o.serving_gpu;
    d.kv_bits = o.serving_kv == "fp8" ? 8 : 16;
    d.max_num_seqs = o.serving_batch_cap;
    d.seeds = {o.seed, o.seed + 1};
    auto w = advise::RunServingWhatIf(d, &std::cerr);
    if (!w.has_value()) return ReportError(w.error());
    auto sf = advise::ServingFindings(*w, o.serving, prefix);
    findings.insert(findings.end(), sf.begin(), sf.end());
    Json pts = Json::array();
    for (const auto& p : w->points) {
      pts.push_back({{"change", p.change}, {"capacity_rps", p.capacity_rps},
                     {"usd_per_gpu_hour", p.usd_per_gpu_hour}, {"usd_per_month", p.usd_per_month}});
    }
    serving_json = {{"trace", o.serving}, {"demand_rps", w->demand_rps}, {"policy", "vllm"},
                    {"seeds", d.seeds}, {"points", pts}};
    assumptions.push_back(
        "serving: cost of the trace's mean arrival rate for a month on demand / capacity GPUs (replicas, "
        "fractional) x price x 730 h; capacity = vLLM's highest rate with >= 90% of requests within "
        "TTFT 2 s / TPOT 100 ms (batching engine, Vidur profiles of Llama-2-7B)");
  }
  advise::SortFindings(findings);
  if (!o.explain.empty()) {
    for (const auto& f : findings) {
      if (f.id != o.explain) continue;
      std::cout << advise::FindingsTable({f});
      return kExitOk;
    }
    std::string ids;
    for (const auto& f : findings) ids += (ids.empty() ? "" : ", ") + f.id;
    return ReportError(InvalidArgumentError("--explain: no finding '" + o.explain + "' (findings: " +
                                            (ids.empty() ? "none" : ids) + ")"));
  }
  if (o.top > 0 && findings.size() > static_cast<std::size_t>(o.top)) {
    findings.resize(static_cast<std::size_t>(o.top));
  }
  Json arr = Json::array();
  for (const auto& f : findings) arr.push_back(advise::FindingJson(f));
  doc["findings"] = arr;
  doc["interval_quantity"] = std::string(ledger::kMonteCarloQuantity);
  doc["assumptions"] = assumptions;
  if (!table.empty()) {
    auto rows_json = [](const std::vector<advise::LeverTableRow>& rows) {
      Json t = Json::array();
      for (const auto& r : rows) {
        Json row = {{"config", r.config}, {"memory_gb", r.ours.memory_gb}, {"step_ms", r.ours.step_ms},
                    {"comm_reduction", r.ours.comm_reduction}};
        if (r.has_seed) {
          row["seed"] = {{"memory_gb", r.seed.memory_gb}, {"step_ms", r.seed.step_ms},
                         {"comm_reduction", r.seed.comm_reduction}};
        }
        t.push_back(row);
      }
      return t;
    };
    auto inputs_json = [](const advise::TrainingStep& s, const advise::LeverParams& p) {
      return Json{{"memory_gb", s.memory_gb}, {"step_ms", s.step_ms}, {"activation_share", s.activation_share},
                  {"comm_share", s.comm_share}, {"mp_compute_speedup", 1.0 / p.mp_compute_factor},
                  {"topk_density", p.topk_density}, {"layers", p.layers},
                  {"quantize_overhead", p.quantize_overhead}};
    };
    doc["lever_table"] = {{"inputs", inputs_json(step, params)},
                          {"rows", rows_json(table)},
                          {"differences", notes},
                          {"seed_implied",
                           {{"inputs", inputs_json(implied.step, implied.params)},
                            {"rows", rows_json(implied_table)},
                            {"notes", implied_notes}}}};
  }
  if (!price_source.empty()) doc["price_source"] = price_source;
  if (opportunity) {
    Json pools = Json::array();
    for (const auto& po : opportunity->pools) {
      pools.push_back({{"pool", po.pool}, {"kind", po.kind}, {"gpu_type", po.gpu_type},
                       {"idle_gpu_hours", po.idle_gpu_hours}, {"idle_usd", po.idle_usd},
                       {"rented_gpu_hours_same_type", po.rented_gpu_hours}, {"rented_usd_same_type", po.rented_usd},
                       {"absorbable_usd", po.absorbable_usd}, {"idle_power_usd", po.power_usd}});
    }
    doc["owned_capacity"] = {{"cloud_usd", opportunity->cloud_usd},
                             {"idle_power_usd", opportunity->idle_power_usd},
                             {"ceiling_usd_per_month", opportunity->ceiling_usd_per_month},
                             {"findings_usd_per_month", ledger_total},
                             {"pools", pools}};
  }
  if (!replay_json.is_null()) doc["replay"] = replay_json;
  if (!serving_json.is_null()) doc["serving"] = serving_json;
  std::string text;
  if (o.output == "html") {
    // The seed-implied row set follows ours; its configs say so.
    std::vector<advise::LeverTableRow> html_table = table;
    html_table.insert(html_table.end(), implied_table.begin(), implied_table.end());
    std::vector<std::string> html_notes = notes;
    html_notes.insert(html_notes.end(), implied_notes.begin(), implied_notes.end());
    text = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Seedance advice</title></head><body>\n" +
           report::AdviceHtmlSection(findings, "Ranked by dollars per month; intervals: " +
                                                   std::string(ledger::kMonteCarloQuantity) +
                                                   " (ledger) or the replay over workload seeds (levers).",
                                     html_table, html_notes) +
           "</body></html>\n";
  } else if (o.output == "json" || !o.out.empty()) {
    text = doc.dump(2) + "\n";
  }
  if (!o.out.empty()) {
    Status s = WriteFileAtomically(o.out, o.output == "html" ? text : doc.dump(2) + "\n");
    if (!s.ok()) return ReportError(s);
  }
  if (o.output == "json") {
    std::cout << text;
    return kExitOk;
  }
  if (o.output == "html") {
    std::cout << "wrote " << o.out << "\n";
    return kExitOk;
  }
  if (!price_source.empty()) std::cout << price_source << "\n";
  std::cout << advise::FindingsTable(findings);
  if (opportunity) {
    const auto& r = *opportunity;
    std::cout << fmt::format(
        "cash ceiling: cloud spend ${:.2f} + idle owned GPUs' power ${:.2f} over {:.1f} h = ${:.2f}/month; the ledger's "
        "findings total ${:.2f}/month\n",
        r.cloud_usd, r.idle_power_usd, r.range_hours, r.ceiling_usd_per_month, ledger_total);
    for (const auto& po : r.pools) {
      std::cout << fmt::format(
          "opportunity: {} pool '{}' ({}): {:.1f} GPU-hours idle (${:.2f}, paid whatever runs: not a saving); "
          "the fleet rented {:.1f} {} GPU-hours (${:.2f}) that could have run there: up to ${:.2f} if the times "
          "line up\n",
          po.kind, po.pool, po.gpu_type, po.idle_gpu_hours, po.idle_usd, po.rented_gpu_hours, po.gpu_type,
          po.rented_usd, po.absorbable_usd);
    }
  }
  if (!table.empty()) {
    std::cout << fmt::format("\nTraining levers on the seed's step (inputs: FP32 {:.1f} GB, {:.0f} ms per step; "
                             "assumed: activations {:.0f}% of memory, exposed all-reduce {:.0f}% of the step)\n",
                             step.memory_gb, step.step_ms, 100 * step.activation_share, 100 * step.comm_share);
    auto print_rows = [](const std::vector<advise::LeverTableRow>& rows) {
      std::cout << fmt::format("{:<87} {:>9} {:>8} {:>8}   {}\n", "configuration", "memory", "step", "comm", "seed");
      for (const auto& r : rows) {
        std::cout << fmt::format("{:<87} {:>6.1f} GB {:>5.0f} ms {:>7.1f}%   {}\n", r.config, r.ours.memory_gb,
                                 r.ours.step_ms, -100 * r.ours.comm_reduction,
                                 r.has_seed ? fmt::format("{:.1f} GB, {:.0f} ms, -{:.0f}%", r.seed.memory_gb,
                                                          r.seed.step_ms, 100 * r.seed.comm_reduction)
                                            : std::string());
      }
    };
    print_rows(table);
    for (const auto& n : notes) std::cout << "  " << n << "\n";
    std::cout << fmt::format("\nSeed-implied inputs (solved from the seed's combination row, then the same model): "
                             "activations {:.1f}% of memory, mixed precision {:.2f}x compute, top-k {:.1f}% density\n",
                             100 * implied.step.activation_share, 1.0 / implied.params.mp_compute_factor,
                             100 * implied.params.topk_density);
    print_rows(implied_table);
    for (const auto& n : implied_notes) std::cout << "  " << n << "\n";
  }
  if (!replay_json.is_null()) {
    std::cout << fmt::format("\nllm-finetune replay (seedance policy, seed {}, {} jobs, {:.0f} h window): baseline ${:.2f}\n",
                             o.seed, replay_json["jobs"].get<std::int64_t>(),
                             replay_json["window_s"].get<double>() / 3600, replay_json["baseline_cost_usd"].get<double>());
    for (const auto& r : replay_json["levers"]) {
      std::cout << fmt::format("  {:<70} ${:>10.2f}  {:>+10.2f} $/month  [{:.2f} .. {:.2f}]  JCT {:.2f} h\n",
                               r["lever"].get<std::string>(), r["cost_usd"].get<double>(),
                               r["usd_per_month"].get<double>(), r["ci_low"].get<double>(),
                               r["ci_high"].get<double>(), r["avg_jct_hours"].get<double>());
    }
  }
  if (!o.out.empty()) std::cout << "wrote " << o.out << "\n";
  return kExitOk;
}

}  // namespace

Action RegisterAdvise(CLI::App& app) {
  auto o = std::make_shared<AdviseOptions>();
  CLI::App* cmd = AddCommand(
      app, "advise", "Rank what to change by dollars per month, with evidence and intervals",
      "From the ledger (--db): idle namespaces and nodes, input-bound jobs (low GPU activity with "
      "high I/O wait), jobs that fit a cheaper GPU without slowing down, jobs to consolidate, jobs "
      "whose pods are annotated seedance.io/checkpoint-interval and seedance.io/deadline-slack "
      "(kube-state-metrics kube_pod_annotations) that run cheaper on spot net of the work "
      "interruptions lose (rate from --spot-trace), jobs whose $ per useful GPU-hour is >= 2x their GPU "
      "model's median (only where no other rule applies: a target appears once); each "
      "with $/month (the range's saving scaled to 730 h), the samples and time range it rests on, an "
      "interval from the ledger's Monte Carlo (cost with idle apportioned, the same code as "
      "`attribute`), an action and the command that reproduces it (--explain ID). With --workload "
      "llm-finetune: the training levers (mixed precision, checkpointing, 8-bit and top-k gradient "
      "compression, collective overlap) replayed in the simulator under the seedance policy and "
      "priced against the baseline. With --serving TRACE: the batching engine's what-if for an inference "
      "deployment (the other GPU type, FP8 KV, batch caps 64/128/512), priced at the trace's arrival "
      "rate. --lever-table prints the seed's lever table beside ours, then the same model at the "
      "seed-implied inputs (solved from the seed's combination row).",
      "seedance advise --db ledger.db --top 10 --output json");
  cmd->add_option("--db", o->ledger.db, "ledger file (SQLite)");
  cmd->add_option("--fleet", o->ledger.fleet,
                  "fleet file whose node_pools price each node (docs/FLEET_FILE.md): savings are then cash only "
                  "(owned / reserved capacity is paid for the window: its idle is reported as opportunity, saved only "
                  "at a stated power_down_usd_per_gpu_hour), and suggestions stay within the fleet's GPU types");
  AddLedgerOptionsWithoutDb(cmd, o->ledger);
  cmd->add_option("--workload", o->workload, "replay the training levers on a workload: llm-finetune");
  cmd->add_option("--top", o->top, "show the N largest findings (0 = all)")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--output", o->output, "table | json | html (html needs --out)")->capture_default_str();
  cmd->add_option("--out", o->out, "also write advise.json (or the HTML page) here, atomically");
  cmd->add_option("--explain", o->explain, "print one finding (its id, e.g. idle:namespace/sandbox) in full");
  cmd->add_flag("--lever-table", o->lever_table, "print the seed's training-lever table beside ours");
  cmd->add_option("--serving", o->serving,
                  "serving what-if on a trace (conv, code, arxiv or a CSV): GPU type, KV precision, batch cap");
  cmd->add_option("--serving-gpu", o->serving_gpu, "the deployment's GPU: a100 | h100")->capture_default_str();
  cmd->add_option("--serving-kv", o->serving_kv, "the deployment's KV precision: fp16 | fp8")->capture_default_str();
  cmd->add_option("--serving-batch-cap", o->serving_batch_cap,
                  "the deployment's max_num_seqs (0 = vLLM's best swept knobs)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--spot-trace", o->spot_trace,
                  "spot series the spot rule's interruption rate comes from (a data/spot_traces file name or a path)")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Monte Carlo and replay seed")->capture_default_str();
  cmd->add_option("--mc-samples", o->mc_samples, "Monte Carlo samples")->capture_default_str()->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--replay-window", o->replay_window, "arrival window of the lever replay (e.g. 2d, 7d)")->capture_default_str();
  cmd->add_option("--ci-seeds", o->ci_seeds, "more workload seeds for the lever intervals ('' = none)")->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? RunAdvise(*o) : -1; };
}

}  // namespace seedance::cli
