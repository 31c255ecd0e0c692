#include "seedance/sched/published_results.h"

#include <algorithm>
#include <cmath>

#include "seedance/core/csv.h"

namespace seedance::sched {

std::string PolicyFromArtifactLabel(const std::string& label) {
  static const std::vector<std::pair<std::string, std::string>> kMap = {
      {"01-Random", "random"},    {"02-DotProd", "dotprod"}, {"03-GpuClustering", "clustering"},
      {"04-GpuPacking", "packing"}, {"05-BestFit", "bestfit"}, {"06-FGD", "fgd"}};
  for (const auto& [a, b] : kMap) {
    if (a == label) return b;
  }
  return "";
}

Result<PublishedPackingTable> LoadPublishedPacking(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_work, t.ColumnIndex("workload"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_pol, t.ColumnIndex("sc_policy"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_100, t.ColumnIndex("100"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_0, t.ColumnIndex("0"));
  std::map<std::pair<std::string, std::string>, std::vector<std::vector<double>>> curves;
  for (const auto& row : t.rows()) {
    std::string policy = PolicyFromArtifactLabel(std::string(t.Str(row, c_pol)));
    if (policy.empty()) return t.FieldError(row, c_pol, "unknown artifact policy label");
    std::vector<double> curve;
    for (std::size_t c = c_0; c < t.header().size(); ++c) {
      if (t.Str(row, c).empty()) {
        curve.push_back(std::nan(""));
        continue;
      }
      SEEDANCE_ASSIGN_OR_RETURN(double v, t.Double(row, c));
      curve.push_back(v);
    }
    (void)c_100;
    curves[{std::string(t.Str(row, c_work)), policy}].push_back(std::move(curve));
  }
  PublishedPackingTable out;
  const std::size_t col100 = c_100 - c_0;
  for (auto& [key, runs] : curves) {
    PublishedPacking p;
    std::vector<double> un;
    for (const auto& c : runs) un.push_back(100.0 - c[col100]);
    p.seeds = static_cast<int>(un.size());
    double sum = 0;
    for (double x : un) sum += x;
    p.mean = sum / static_cast<double>(un.size());
    double ss = 0;
    for (double x : un) ss += (x - p.mean) * (x - p.mean);
    p.sd = un.size() > 1 ? std::sqrt(ss / static_cast<double>(un.size() - 1)) : 0;
    auto med = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      const std::size_t n = v.size();
      return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    };
    p.median = med(un);
    const std::size_t cols = runs.front().size();
    for (std::size_t k = 0; k < cols; ++k) {
      std::vector<double> v;
      for (const auto& c : runs) {
        if (k < c.size() && !std::isnan(c[k])) v.push_back(c[k]);
      }
      p.median_alloc_pct.push_back(v.empty() ? std::nan("") : med(v));
    }
    out[key] = std::move(p);
  }
  return out;
}

}  // namespace seedance::sched
