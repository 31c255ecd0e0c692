#include "seedance/report/policy_style.h"

#include <array>

namespace seedance::report {
namespace {

struct PolicyStyle {
  std::string_view name;
  std::string_view display;
  std::string_view color;
};

// Colours from the Tableau 10 and D3 category palettes, chosen to stay distinct from each other on
// white.
constexpr std::array<PolicyStyle, 8> kStyles = {{
    {"random", "Random", "#9c755f"},
    {"dotprod", "DotProd", "#f28e2b"},
    {"clustering", "Clustering", "#76b7b2"},
    {"packing", "Packing", "#b07aa1"},
    {"bestfit", "BestFit", "#4e79a7"},
    {"fgd", "FGD", "#e15759"},
    {"seedance", "Seedance", "#59a14f"},
    {"firstfit", "FirstFit", "#bcbd22"},
}};

const PolicyStyle* Find(std::string_view policy) {
  for (const PolicyStyle& s : kStyles) {
    if (s.name == policy) return &s;
  }
  return nullptr;
}

}  // namespace

std::string PolicyDisplayName(std::string_view policy) {
  const PolicyStyle* s = Find(policy);
  return std::string(s != nullptr ? s->display : policy);
}

std::string PolicyColor(std::string_view policy) {
  const PolicyStyle* s = Find(policy);
  return std::string(s != nullptr ? s->color : "#8c8c8c");
}

}  // namespace seedance::report
