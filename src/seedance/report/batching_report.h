#pragma once

#include <iosfwd>
#include <string>

#include "seedance/batching/benchmark.h"
#include "seedance/core/status.h"

namespace seedance::report {

// Looks up the on-demand $/GPU-hour of the batching GPU (batching::GpuSpec::price_model) in
// the price table at `prices_path` (empty: the bundled data/prices/gpu_prices.csv) and stores
// it, with its source, in `config`. Errors: the table's load errors; kNotFound when the table
// does not price that GPU.
Status AttachGpuPrice(batching::BatchingConfig& config, const std::string& prices_path);

// batching.json: {"policies": [{"name", "goodput_rps", "slo_attainment", "throughput_rps",
// "ttft_p99_s", "tpot_p99_s", "usd_per_mtok", ...}], "multi_tenant": [...], "sweep": {...},
// "pareto": {...}, "model": {...}, ...}. Deterministic (no wall-clock figures).
std::string BatchingJson(const batching::BatchingResults& r);
// The report's body (headline, tables, Pareto-front and rate-sweep charts) as an HTML
// <section>, for embedding in another report.
std::string BatchingHtmlSection(const batching::BatchingResults& r);
// A self-contained batching_report.html (inline CSS and SVG, no script, no external link).
std::string BatchingReportHtml(const batching::BatchingResults& r);
// The per-policy table printed by `seedance batching`.
std::string FormatBatchingTable(const batching::BatchingResults& r);
// Writes DIR/batching.json and DIR/batching_report.html atomically (creates DIR).
Status WriteBatchingOutputs(const batching::BatchingResults& r, const std::string& dir);

// The bundled default (Azure conversation trace, Llama-2-7B FP16 on A100, SLO TTFT 2 s /
// TPOT 100 ms, rate sweep to vLLM's 90 % point, multi-tenant mix): results and the HTML
// section, for `seedance cost-benchmark --workload llm-inference`.
struct BundledBatching {
  batching::BatchingResults results;
  std::string html_section;
};
Result<BundledBatching> RunBundledBatching(std::ostream* progress);

}  // namespace seedance::report
