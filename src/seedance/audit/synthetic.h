#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/audit/series.h"
#include "seedance/core/rng.h"

namespace seedance::audit {

// Synthetic dcgm-style telemetry for tests, the benchmark and the enforcement scenario: GPU
// activity follows slow waves plus noise, and power follows a known linear model (S7.5) plus
// Gaussian noise, so a fit has a ground truth. Faults are injected from `fault_start_s` on.
struct SyntheticPowerModel {
  double sm_w = 250;    // W at SM activity 1
  double int_w = 40;    // W at integer-op ratio 1
  double dram_w = 90;   // W at memory bandwidth 1
  double idle_w = 60;   // W at no activity
  double noise_w = 5;   // standard deviation of the noise, W
};

enum class SyntheticFault : std::uint8_t {
  kNone,
  kPowerDrift,  // power grows by `fault_magnitude` (share) per day after the start
  kXid,         // XID `xid_code` once an hour after the start
  kHot,         // temperature + `fault_magnitude` °C after the start
  kEcc,         // one uncorrectable ECC error every 6 hours after the start
};

struct SyntheticNode {
  std::string host;
  std::string model_name = "NVIDIA A100-SXM4-80GB";
  std::string driver = "550.54.15";
  int gpus = 8;
  double activity = 0.6;  // mean SM activity
  SyntheticPowerModel power;
  SyntheticFault fault = SyntheticFault::kNone;
  std::int64_t fault_start_s = 0;
  double fault_magnitude = 0;
  int xid_code = 79;
  // Optional: schedule records with this relative deviation (0: none).
  double schedule_deviation = 0;
  bool with_cpu = false;  // add a host CPU series (follows GPU activity)
};

// Generates samples at [start_s, end_s) every `step_s` seconds for every GPU of `node`. GPU k's
// UUID is "GPU-<host>-<k>". Deterministic for a given `rng` state.
NodeTelemetry GenerateNodeTelemetry(const SyntheticNode& node, std::int64_t start_s,
                                    std::int64_t end_s, std::int64_t step_s, Rng& rng);

}  // namespace seedance::audit
