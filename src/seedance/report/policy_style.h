#pragma once

#include <string>
#include <string_view>

namespace seedance::report {

// Returns how reports spell a placement policy: "fgd" -> "FGD", "bestfit" -> "BestFit",
// "seedance" -> "Seedance"; an unknown name is returned unchanged.
std::string PolicyDisplayName(std::string_view policy);

// Returns the CSS colour every chart uses for `policy`, so a policy keeps its colour across
// charts and reports. Unknown names get a grey.
std::string PolicyColor(std::string_view policy);

}  // namespace seedance::report
