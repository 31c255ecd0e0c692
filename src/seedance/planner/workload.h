#pragma once

#include <string>
#include <vector>

#include "seedance/batching/trace.h"
#include "seedance/core/status.h"

namespace seedance::planner {

// A request-size grid: buckets (edges[i], edges[i+1]] of prompt and of output tokens (Mélange's
// load-balancer rule: a length goes to the first bucket whose upper edge it does not exceed).
// Bucket index = input * outputs() + output.
struct BucketGrid {
  std::string name;                 // "melange" | "fine" | custom
  std::vector<int> input_edges;     // ascending, first 0
  std::vector<int> output_edges;
  int inputs() const { return static_cast<int>(input_edges.size()) - 1; }
  int outputs() const { return static_cast<int>(output_edges.size()) - 1; }
  int buckets() const { return inputs() * outputs(); }
  // Bucket of a request; -1 when a length exceeds the last edge.
  int BucketOf(int prompt, int output) const;
  std::string BucketName(int b) const;   // "in (100,250] out (25,100]"
  std::string Key() const;               // edges, for cache keys
};

// Mélange's cut points 0, 25, 100, 250, 500, 1000, 2000 on both axes (6 x 6), with the input
// axis continued to the model's context (2000, max_context] so long prompts (Azure code) are
// not dropped: 7 x 6 (contexts over 4,096 add the doublings 4096, 8192, ... below the context). `fine`: about twice the cut points on each axis (13 x 11).
BucketGrid MelangeGrid(int max_context);
BucketGrid FineGrid(int max_context);
// "melange" | "fine". Errors: kInvalidArgument naming the accepted names.
Result<BucketGrid> GridByName(const std::string& name, int max_context);

// The trace as Mélange sees it: requests per bucket, rate over the trace's span.
struct Workload {
  std::string name;
  BucketGrid grid;
  std::vector<double> fraction;         // per bucket, of the requests that fit the context
  std::vector<std::int64_t> requests;   // per bucket
  std::int64_t total = 0;               // requests in the trace
  std::int64_t over_context = 0;        // prompt + output > max_context: no GPU can serve them
  double span_s = 0;                    // first to last arrival (0 for a lengths-only trace)
  double rate_rps = 0;                  // servable requests / span (0 without arrivals)
  double mean_tokens = 0;               // prompt + output per servable request
};

// Buckets `trace`. Errors: kInvalidArgument for an empty trace or one where no request fits
// the model's context (the message says how many exceed it).
Result<Workload> BucketTrace(const batching::Trace& trace, const BucketGrid& grid, int max_context);

}  // namespace seedance::planner
