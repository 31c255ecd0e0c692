#include "seedance/planner/workload.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace seedance::planner {
namespace {

int EdgeIndex(const std::vector<int>& edges, int v) {
  for (std::size_t i = 1; i < edges.size(); ++i) {
    if (v <= edges[i]) return static_cast<int>(i) - 1;
  }
  return -1;
}

// The prompt axis continued to the context: 4096, 8192, ... below it, then the context itself
// (a 16k-context model gets (2000,4096], (4096,8192], (8192,16384], not one bucket probed at 16k).
std::vector<int> WithContext(std::vector<int> edges, int max_context) {
  for (int e = 4096; e < max_context; e *= 2) {
    if (e > edges.back()) edges.push_back(e);
  }
  if (max_context > edges.back()) edges.push_back(max_context);
  return edges;
}

}  // namespace

int BucketGrid::BucketOf(int prompt, int output) const {
  const int i = EdgeIndex(input_edges, prompt), o = EdgeIndex(output_edges, output);
  if (i < 0 || o < 0) return -1;
  return i * outputs() + o;
}

std::string BucketGrid::BucketName(int b) const {
  const int i = b / outputs(), o = b % outputs();
  return fmt::format("in ({},{}] out ({},{}]", input_edges[static_cast<std::size_t>(i)],
                     input_edges[static_cast<std::size_t>(i) + 1], output_edges[static_cast<std::size_t>(o)],
                     output_edges[static_cast<std::size_t>(o) + 1]);
}

std::string BucketGrid::Key() const {
  return fmt::format("in{}-out{}", fmt::join(input_edges, "_"), fmt::join(output_edges, "_"));
}

BucketGrid MelangeGrid(int max_context) {
  const std::vector<int> e = {0, 25, 100, 250, 500, 1000, 2000};
  return BucketGrid{"melange", WithContext(e, max_context), e};
}

BucketGrid FineGrid(int max_context) {
  return BucketGrid{"fine",
                    WithContext({0, 25, 50, 100, 175, 250, 375, 500, 750, 1000, 1500, 2000, 3000}, max_context),
                    {0, 25, 50, 100, 175, 250, 375, 500, 750, 1000, 1500, 2000}};
}

Result<BucketGrid> GridByName(const std::string& name, int max_context) {
  if (name == "melange") return MelangeGrid(max_context);
  if (name == "fine") return FineGrid(max_context);
  return InvalidArgumentError(fmt::format("unknown grid '{}' (accepted: melange, fine)", name));
}

Result<Workload> BucketTrace(const batching::Trace& trace, const BucketGrid& grid, int max_context) {
  if (trace.requests.empty()) return InvalidArgumentError(trace.name + ": the trace has no requests");
  Workload w;
  w.name = trace.name;
  w.grid = grid;
  w.requests.assign(static_cast<std::size_t>(grid.buckets()), 0);
  w.fraction.assign(static_cast<std::size_t>(grid.buckets()), 0);
  w.total = static_cast<std::int64_t>(trace.requests.size());
  double tokens = 0;
  std::int64_t servable = 0;
  for (const batching::Request& r : trace.requests) {
    const int b = r.prompt + r.output > max_context ? -1 : grid.BucketOf(r.prompt, r.output);
    if (b < 0) {
      ++w.over_context;
      continue;
    }
    ++w.requests[static_cast<std::size_t>(b)];
    ++servable;
    tokens += r.prompt + r.output;
  }
  if (servable == 0) {
    return InvalidArgumentError(fmt::format(
        "{}: none of its {} requests fits the model's context of {} tokens (prompt + output)",
        trace.name, w.total, max_context));
  }
  for (std::size_t b = 0; b < w.requests.size(); ++b) {
    w.fraction[b] = static_cast<double>(w.requests[b]) / static_cast<double>(servable);
  }
  w.span_s = trace.Span();
  w.rate_rps = w.span_s > 0 ? static_cast<double>(servable) / w.span_s : 0;
  w.mean_tokens = tokens / static_cast<double>(servable);
  return w;
}

}  // namespace seedance::planner
