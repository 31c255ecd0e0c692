#pragma once

#include <string>
#include <vector>

#include "seedance/batching/executor.h"
#include "seedance/core/status.h"

namespace seedance::batching {

// One candidate batch size with its measured or modelled throughput, latency and memory.
struct BatchPoint {
  int batch = 0;
  double throughput = 0;    // requests/s (seed table) or decode tokens/s (profiled executor)
  double latency_s = 0;     // per-iteration (decode step) or per-request latency
  double memory_bytes = 0;  // weights + activations + KV for `batch` sequences
  bool on_front = false;    // not dominated (higher throughput, lower latency, lower memory)
  bool feasible = false;    // within the memory cap and the latency SLO
};

// S5.3: marks the Pareto front and the feasible points, and returns the index of the
// feasible point of maximum throughput (ties: smaller batch), or -1 when none is feasible.
int ChooseBatch(std::vector<BatchPoint>& points, double memory_cap_bytes, double latency_slo_s);

// The seed's batch table (S5.2), loaded with the same curve loader as the Vidur profiles:
// CSV columns batch_size, throughput_rps, latency_ms, memory_gib. Errors as LoadCurve.
Result<std::vector<BatchPoint>> LoadSeedBatchTable(const std::string& path);

// Memory model M(b) = M0 + alpha * b fitted (least squares) to the points; {M0, alpha} bytes.
Result<std::vector<double>> FitMemoryModel(const std::vector<BatchPoint>& points);

// Decode-step candidates b = 1..max_batch from the profiled executor at a mean context of
// `context` tokens: throughput = b / step time tokens/s, memory = weights + b x context x KV
// bytes per token.
std::vector<BatchPoint> ExecutorBatchPoints(const ProfiledExecutor& e, double context, int max_batch);

}  // namespace seedance::batching
