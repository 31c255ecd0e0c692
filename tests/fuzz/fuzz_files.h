#pragma once
// Files the file-format harnesses resolve names against: a folder made once per process with a
// small spot availability series (SkyPilot spot-traces JSON, 5-minute ticks) under two names, as
// the fleet file (`series: [s.json]`) and the spot windows CSV (`trace` = t.json, looked up in
// DATA_DIR/spot_traces/) name them, and two spot price series (p.csv, p.json). Inputs holding a
// '/' are skipped by those harnesses, so that
// the fuzzer reads no file outside this folder (/dev/zero, /proc/...).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace seedance::fuzz {

inline const std::string& SeriesDir() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("seedance_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d / "spot_traces");
    std::string series = R"({"metadata": {"gap_seconds": 300}, "data": [)";
    for (int i = 0; i < 288; ++i) series += std::string(i ? ", " : "") + ((i / 12) % 3 == 0 ? "0" : "4");
    series += "]}\n";
    for (const auto& p : {d / "s.json", d / "spot_traces" / "t.json"}) std::ofstream(p) << series;
    // Spot price series (`price_series: p.csv` / `p.json`): a CSV in seconds and an AWS history.
    std::ofstream(d / "p.csv") << "time,usd_per_gpu_hour\n0,1.2\n3600,0.8\n7200,2.5\n";
    std::ofstream(d / "p.json") << R"({"SpotPriceHistory": [
  {"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "SpotPrice": "24.0",
   "Timestamp": "2026-12-01T01:00:00+00:00"},
  {"AvailabilityZone": "us-east-1b", "InstanceType": "p5.48xlarge", "SpotPrice": "20.0",
   "Timestamp": "2026-12-01T00:00:00Z"},
  {"AvailabilityZone": "us-east-1a", "InstanceType": "p5.48xlarge", "SpotPrice": "16.0",
   "Timestamp": "2026-12-01T00:00:00Z"}]})";
    return d.string();
  }();
  return dir;
}

}  // namespace seedance::fuzz
