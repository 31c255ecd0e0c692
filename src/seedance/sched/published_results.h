#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::sched {

// The FGD artifact's published per-seed results (data/fgd_expected/analysis_allo_discrete.csv):
// unallocated GPU % at 100% arrived, per (workload, policy), over its 10 seeds.
struct PublishedPacking {
  double mean = 0;
  double sd = 0;  // sample standard deviation
  double median = 0;
  int seeds = 0;
  std::vector<double> median_alloc_pct;  // median over seeds per arrived-% column
};

// Keyed by (workload file stem, our policy name), e.g. ("openb_pod_list_default", "fgd").
using PublishedPackingTable = std::map<std::pair<std::string, std::string>, PublishedPacking>;

// Loads the artifact's CSV. Errors name file, line and field.
Result<PublishedPackingTable> LoadPublishedPacking(const std::string& path);

// Maps the artifact's policy label ("06-FGD") to ours ("fgd"); empty if unknown.
std::string PolicyFromArtifactLabel(const std::string& label);

// The tolerance of issue #2 for a faithful baseline: max(0.5, 2 x published sd) points.
inline double FaithfulTolerance(const PublishedPacking& p) {
  return p.sd * 2 > 0.5 ? p.sd * 2 : 0.5;
}

}  // namespace seedance::sched
