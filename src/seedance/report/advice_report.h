#pragma once

#include <string>
#include <vector>

#include "seedance/advise/finding.h"
#include "seedance/advise/levers.h"

namespace seedance::report {

// The report's "Advice" section: the ranked findings (dollars per month, interval, evidence,
// action, the command that reproduces each figure), then the seed's lever table beside ours
// when `lever_table` is not empty.
std::string AdviceHtmlSection(const std::vector<advise::Finding>& findings, const std::string& intro,
                              const std::vector<advise::LeverTableRow>& lever_table,
                              const std::vector<std::string>& lever_notes);

}  // namespace seedance::report
