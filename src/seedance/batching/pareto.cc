#include "seedance/batching/pareto.h"

#include <cmath>

#include "seedance/batching/profile.h"

namespace seedance::batching {

int ChooseBatch(std::vector<BatchPoint>& points, double memory_cap_bytes, double latency_slo_s) {
  int best = -1;
  for (std::size_t i = 0; i < points.size(); ++i) {
    BatchPoint& p = points[i];
    p.on_front = true;
    for (const BatchPoint& q : points) {
      const bool no_worse = q.throughput >= p.throughput && q.latency_s <= p.latency_s &&
                            q.memory_bytes <= p.memory_bytes;
      const bool better = q.throughput > p.throughput || q.latency_s < p.latency_s ||
                          q.memory_bytes < p.memory_bytes;
      if (no_worse && better) {
        p.on_front = false;
        break;
      }
    }
    p.feasible = p.memory_bytes <= memory_cap_bytes && p.latency_s <= latency_slo_s;
    if (p.feasible && (best < 0 || p.throughput > points[static_cast<std::size_t>(best)].throughput)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

Result<std::vector<BatchPoint>> LoadSeedBatchTable(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(Curve tput, LoadCurve(t, "batch_size", {"throughput_rps"}));
  SEEDANCE_ASSIGN_OR_RETURN(Curve lat, LoadCurve(t, "batch_size", {"latency_ms"}));
  SEEDANCE_ASSIGN_OR_RETURN(Curve mem, LoadCurve(t, "batch_size", {"memory_gib"}));
  std::vector<BatchPoint> points;
  for (double b : tput.xs()) {
    if (b < 1 || b != std::floor(b)) {
      return InvalidArgumentError(t.name() + ": batch_size must be a positive integer");
    }
    points.push_back(BatchPoint{static_cast<int>(b), tput.At(b), lat.At(b) / 1e3,
                                mem.At(b) * 1024.0 * 1024.0 * 1024.0, false, false});
  }
  return points;
}

Result<std::vector<double>> FitMemoryModel(const std::vector<BatchPoint>& points) {
  std::vector<std::vector<double>> a;
  std::vector<double> b;
  for (const auto& p : points) {
    a.push_back({1.0, static_cast<double>(p.batch)});
    b.push_back(p.memory_bytes);
  }
  return LeastSquares(a, b);
}

std::vector<BatchPoint> ExecutorBatchPoints(const ProfiledExecutor& e, double context, int max_batch) {
  std::vector<BatchPoint> points;
  const double weights = WeightBytes(e.model(), e.precision());
  const double kv = KvBytesPerToken(e.model());
  for (int b = 1; b <= max_batch; ++b) {
    const double lat = e.DecodeStepSeconds(b, context);
    points.push_back(BatchPoint{b, b / lat, lat, weights + b * context * kv, false, false});
  }
  return points;
}

}  // namespace seedance::batching
