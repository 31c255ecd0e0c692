#pragma once

// Formatting shared by the text table, results.json and the HTML report of cost-benchmark.
// Private to seedance::report.

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/report/cost_benchmark.h"

namespace seedance::report::internal {

// Returns the costs of the baselines every report compares each policy against (BestFit, then
// FGD), those of them that ran.
std::vector<const PolicyCost*> SavingBaselines(const CostBenchmarkResult& r);

// Returns "42-51" for 42..51, "1,3-5" for {1,3,4,5}: runs of consecutive seeds collapsed.
std::string FormatSeedList(const std::vector<std::uint64_t>& seeds);

// Returns "4.77 ± 0.11" for policy i's published FGD-artifact result, or "-" when there is none.
std::string FormatPublished(const CostBenchmarkResult& r, std::size_t i);

// Returns the GPU models of the fleet priced by proxy, e.g. "G2, G3, V100M32"; empty if none.
std::string ProxyModelList(const cost::FleetCost& fleet);

// Returns one line per proxy-priced model of the fleet: "G2: <note>".
std::vector<std::string> PriceAssumptions(const cost::FleetCost& fleet);

// Returns the sentence that says how stranded dollars are computed (no final period).
std::string StrandedCostMethod();

}  // namespace seedance::report::internal
