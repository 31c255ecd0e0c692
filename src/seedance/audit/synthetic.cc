#include "seedance/audit/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace seedance::audit {
namespace {

double Clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

}  // namespace

NodeTelemetry GenerateNodeTelemetry(const SyntheticNode& node, std::int64_t start_s,
                                    std::int64_t end_s, std::int64_t step_s, Rng& rng) {
  NodeTelemetry t;
  t.host = node.host;
  const std::size_t n =
      end_s > start_s ? static_cast<std::size_t>((end_s - start_s + step_s - 1) / step_s) : 0;
  constexpr double kTwoPi = 2 * std::numbers::pi;
  for (int k = 0; k < node.gpus; ++k) {
    GpuSeries g;
    g.uuid = "GPU-" + node.host + "-" + std::to_string(k);
    g.model_name = node.model_name;
    g.driver = node.driver;
    g.t_s.resize(n);
    for (auto& c : g.columns) c.resize(n);
    const double phase = rng.UniformDouble() * kTwoPi;
    double pcie = static_cast<double>(rng.UniformInt(0, 1000));
    double ecc = 0;
    std::int64_t next_xid = node.fault_start_s;
    std::int64_t next_ecc = node.fault_start_s;
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t ts = start_s + static_cast<std::int64_t>(i) * step_s;
      const double x = static_cast<double>(ts);
      g.t_s[i] = ts;
      const double sm = Clamp01(node.activity + 0.25 * std::sin(kTwoPi * x / 7200 + phase) +
                                0.08 * rng.Normal());
      const double intr =
          Clamp01(0.25 + 0.15 * std::sin(kTwoPi * x / 5400 + 2 * phase) + 0.05 * rng.Normal());
      const double dram =
          Clamp01(0.35 + 0.2 * std::sin(kTwoPi * x / 3000 + 3 * phase) + 0.05 * rng.Normal());
      double power = node.power.idle_w + node.power.sm_w * sm + node.power.int_w * intr +
                     node.power.dram_w * dram + node.power.noise_w * rng.Normal();
      double temp = 38 + 35 * sm + rng.Normal();
      double xid = 0;
      const bool faulty = node.fault != SyntheticFault::kNone && ts >= node.fault_start_s;
      if (faulty) {
        switch (node.fault) {
          case SyntheticFault::kPowerDrift:
            power *= 1 + node.fault_magnitude * static_cast<double>(ts - node.fault_start_s) / 86400;
            break;
          case SyntheticFault::kXid:
            if (ts >= next_xid) {
              xid = node.xid_code;
              next_xid += 3600;
            }
            break;
          case SyntheticFault::kHot:
            temp += node.fault_magnitude;
            break;
          case SyntheticFault::kEcc:
            if (ts >= next_ecc) {
              ecc += 1;
              next_ecc += 6 * 3600;
            }
            break;
          case SyntheticFault::kNone:
            break;
        }
      }
      pcie += rng.Bernoulli(0.01) ? 1 : 0;
      const double used = 20000 + 40000 * sm;
      auto set = [&](Field f, double v) { g.col(f)[i] = static_cast<float>(v); };
      set(Field::kPowerW, power);
      set(Field::kGpuUtilPct, std::min(100.0, sm * 120));
      set(Field::kTempC, temp);
      set(Field::kXid, xid);
      set(Field::kPcieReplay, pcie);
      set(Field::kTensorActive, sm * 0.7);
      set(Field::kEccUncorrectable, ecc);
      set(Field::kSmActive, sm);
      set(Field::kIntActive, intr);
      set(Field::kDramActive, dram);
      set(Field::kFbUsedMib, used);
      set(Field::kFbFreeMib, 81920 - used);
    }
    t.gpus.push_back(std::move(g));
  }
  if (node.with_cpu && !t.gpus.empty()) {
    const auto& u = t.gpus.front().col(Field::kGpuUtilPct);
    t.cpu_t_s = t.gpus.front().t_s;
    t.cpu_util_pct.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      t.cpu_util_pct[i] = static_cast<float>(std::clamp(10 + 0.6 * u[i] + 3 * rng.Normal(), 0.0, 100.0));
    }
  }
  if (node.schedule_deviation > 0) {
    for (int k = 0; k < 20; ++k) {
      ScheduleRecord r;
      r.task = node.host + "-task-" + std::to_string(k);
      r.planned_start_s = static_cast<double>(start_s + k * 3600);
      r.planned_runtime_s = 3000;
      r.actual_start_s = r.planned_start_s + 0.5 * node.schedule_deviation * 3000;
      r.actual_runtime_s = r.planned_runtime_s * (1 + 0.5 * node.schedule_deviation);
      t.schedule.push_back(r);
    }
  }
  return t;
}

}  // namespace seedance::audit
