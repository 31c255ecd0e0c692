#include "seedance/fleet/decomposition.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "seedance/report/html.h"

namespace seedance::fleet {
namespace {

void Add(double from, double* to) { *to += from; }

template <typename T, std::size_t N>
void Add(const std::array<T, N>& from, std::array<T, N>* to) {
  for (std::size_t k = 0; k < N; ++k) Add(from[k], &(*to)[k]);
}

template <typename T>
void Add(const std::vector<T>& from, std::vector<T>* to) {
  if (to->size() < from.size()) to->resize(from.size());
  for (std::size_t k = 0; k < from.size(); ++k) Add(from[k], &(*to)[k]);
}

template <typename T>
const T& At(const std::vector<T>& v, std::size_t k) {
  static const T zero{};
  return k < v.size() ? v[k] : zero;
}

double SumOf(const std::array<double, 3>& a) { return a[0] + a[1] + a[2]; }

}  // namespace

void AddDecomposition(const FleetWeekOutcome& o, FleetWeekOutcome* sum) {
  if (sum->gpu_types.empty()) sum->gpu_types = o.gpu_types;
  Add(o.cloud_gpu_hours_by_type, &sum->cloud_gpu_hours_by_type);
  Add(o.cloud_usd_by_type, &sum->cloud_usd_by_type);
  Add(o.owned_free_gpu_hours_by_type, &sum->owned_free_gpu_hours_by_type);
  Add(o.owned_free_while_cloud_training_gpu_hours_by_type, &sum->owned_free_while_cloud_training_gpu_hours_by_type);
  Add(o.training_gpu_hours_by_type, &sum->training_gpu_hours_by_type);
  Add(o.training_pflop_by_type, &sum->training_pflop_by_type);
  Add(o.committed_training_gpu_hours_by_type, &sum->committed_training_gpu_hours_by_type);
  Add(o.serving_gpu_hours_by_type, &sum->serving_gpu_hours_by_type);
  sum->training_lost_pflop += o.training_lost_pflop;
  sum->training_lost_gpu_hours += o.training_lost_gpu_hours;
  sum->training_restore_gpu_hours += o.training_restore_gpu_hours;
}

nlohmann::json DecompositionJson(const FleetWeekOutcome& o) {
  nlohmann::json j;
  j["what"] =
      "the committed bill (paid whatever runs), then per GPU type: committed GPU-hours free and, of those, free while "
      "training ran on a cloud node; training GPU-hours (all pools, committed) and serving GPU-hours; the cloud bill and "
      "GPU-hours held by tier and use (a MIG slice counts its compute fraction); and the training work lost";
  j["committed_usd"] = o.committed_usd;
  j["training_lost_gpu_hours"] = o.training_lost_gpu_hours;
  j["training_restore_gpu_hours"] = o.training_restore_gpu_hours;
  nlohmann::json by_type = nlohmann::json::object();
  for (std::size_t t = 0; t < o.gpu_types.size(); ++t) {
    nlohmann::json row;
    row["owned_free_gpu_hours"] = At(o.owned_free_gpu_hours_by_type, t);
    row["owned_free_while_cloud_training_gpu_hours"] = At(o.owned_free_while_cloud_training_gpu_hours_by_type, t);
    row["training_gpu_hours"] = SumOf(At(o.training_gpu_hours_by_type, t));
    row["committed_training_gpu_hours"] = SumOf(At(o.committed_training_gpu_hours_by_type, t));
    for (std::size_t k = 0; k < 3; ++k) {
      row["training_gpu_hours_by_kind"][kTrainingKinds[k]] = At(o.training_gpu_hours_by_type, t)[k];
      row["committed_training_gpu_hours_by_kind"][kTrainingKinds[k]] = At(o.committed_training_gpu_hours_by_type, t)[k];
    }
    row["serving_gpu_hours"] = At(o.serving_gpu_hours_by_type, t);
    const char* tiers[] = {"on_demand", "spot"};
    for (std::size_t tier = 0; tier < 2; ++tier) {
      nlohmann::json c;
      c["usd"] = At(o.cloud_usd_by_type, t)[tier];
      for (int u = 0; u < kNumUses; ++u) c["gpu_hours"][UseName(u)] = At(o.cloud_gpu_hours_by_type, t)[tier][static_cast<std::size_t>(u)];
      row[tiers[tier]] = c;
    }
    by_type[o.gpu_types[t]] = row;
  }
  j["by_type"] = by_type;
  return j;
}

nlohmann::json BoundDecompositionJson(const BoundDecomposition& b) {
  nlohmann::json j;
  j["what"] = "the bound's LP solution for the base's work: per GPU type the GPU-hours it gives training, serving and "
              "notebooks, and the GPU-hours and $ it takes from committed, on-demand and spot pools (committed at 0 $: "
              "their bill is committed_usd)";
  j["committed_usd"] = b.committed_usd;
  nlohmann::json by_type = nlohmann::json::object();
  const char* uses[] = {"training", "serving", "notebooks"};
  const char* tiers[] = {"committed", "on_demand", "spot"};
  for (std::size_t t = 0; t < b.gpu_types.size(); ++t) {
    nlohmann::json row;
    for (std::size_t k = 0; k < 3; ++k) {
      row["gpu_hours"][uses[k]] = At(b.gpu_hours_by_use, t)[k];
      row[tiers[k]] = {{"gpu_hours", At(b.pool_gpu_hours, t)[k]}, {"usd", At(b.pool_usd, t)[k]}};
    }
    by_type[b.gpu_types[t]] = row;
  }
  j["by_type"] = by_type;
  return j;
}

namespace {

// One cell: dollars, then the GPU-hours behind them by use (zeros left out).
std::string CloudCell(double usd, const std::array<double, kNumUses>& h, double n) {
  std::string parts;
  const auto part = [&](const char* what, double v) {
    if (v / n < 0.5) return;
    parts += fmt::format("{}{} {:.0f}", parts.empty() ? "" : ", ", what, v / n);
  };
  part("training", h[kTraining]);
  part("serving", h[kServing]);
  part("notebooks", h[kDevActive] + h[kDevIdle]);
  part("free on held nodes", h[kFree]);
  part("booting", h[kBooting]);
  return fmt::format("${:.0f}", usd / n) + (parts.empty() ? "" : " <small>(GPU-h: " + parts + ")</small>");
}

}  // namespace

std::string DecompositionHtml(const FleetWeekOutcome& base, double base_weeks, const FleetWeekOutcome& seedance,
                              double seedance_weeks, const BoundDecomposition* bound, double bound_weeks) {
  const double nb = std::max(1.0, base_weeks), ns = std::max(1.0, seedance_weeks), nl = std::max(1.0, bound_weeks);
  const std::vector<std::string>& types = base.gpu_types.empty() ? seedance.gpu_types : base.gpu_types;
  std::string h = "<table><tr><th>mean per week</th><th>base</th><th>seedance</th>";
  if (bound != nullptr) h += "<th>lower bound (the LP's schedule for the base's work)</th>";
  h += "</tr>\n";
  const auto row = [&](const std::string& what, const std::string& b, const std::string& s, const std::string& l) {
    h += "<tr><td>" + report::HtmlEscape(what) + "</td><td>" + b + "</td><td>" + s + "</td>";
    if (bound != nullptr) h += "<td>" + l + "</td>";
    h += "</tr>\n";
  };
  const auto usd = [](double v, double n) { return fmt::format("${:.0f}", v / n); };
  row("the whole bill", usd(base.total_usd, nb), usd(seedance.total_usd, ns),
      bound != nullptr ? usd(bound->committed_usd + [&] {
        double c = 0;
        for (const auto& t : bound->pool_usd) c += t[1] + t[2];
        return c;
      }(), nl)
                       : "");
  row("committed GPUs (owned at TCO, reserved): paid whatever runs", usd(base.committed_usd, nb),
      usd(seedance.committed_usd, ns), bound != nullptr ? usd(bound->committed_usd, nl) : "");
  const char* tier_names[] = {"on-demand", "spot"};
  for (std::size_t t = 0; t < types.size(); ++t) {
    for (std::size_t tier = 0; tier < 2; ++tier) {
      const double b_usd = At(base.cloud_usd_by_type, t)[tier], s_usd = At(seedance.cloud_usd_by_type, t)[tier];
      const double l_usd = bound != nullptr ? At(bound->pool_usd, t)[tier + 1] : 0.0;
      if (b_usd / nb < 0.5 && s_usd / ns < 0.5 && l_usd / nl < 0.5) continue;
      row(types[t] + " cloud, " + tier_names[tier],
          CloudCell(b_usd, At(base.cloud_gpu_hours_by_type, t)[tier], nb),
          CloudCell(s_usd, At(seedance.cloud_gpu_hours_by_type, t)[tier], ns),
          bound != nullptr ? fmt::format("${:.0f} <small>(GPU-h {:.0f})</small>", l_usd / nl, At(bound->pool_gpu_hours, t)[tier + 1] / nl)
                           : "");
    }
    const auto kinds = [&](const FleetWeekOutcome& o, double n) {
      const auto& k = At(o.committed_training_gpu_hours_by_type, t);
      return fmt::format("{:.0f} <small>(fine-tunes {:.0f}, Philly {:.0f}, other {:.0f})</small>", SumOf(k) / n, k[0] / n, k[1] / n, k[2] / n);
    };
    const double owned = SumOf(At(base.committed_training_gpu_hours_by_type, t)) + At(base.owned_free_gpu_hours_by_type, t) +
                         SumOf(At(seedance.committed_training_gpu_hours_by_type, t)) + At(seedance.owned_free_gpu_hours_by_type, t);
    if (owned <= 0 && (bound == nullptr || At(bound->pool_gpu_hours, t)[0] <= 0)) continue;
    row(types[t] + " committed: training GPU-h", kinds(base, nb), kinds(seedance, ns),
        bound != nullptr ? fmt::format("{:.0f}", At(bound->gpu_hours_by_use, t)[0] / nl) + " <small>(all pools)</small>" : "");
    row(types[t] + ": serving GPU-h (all pools)", fmt::format("{:.0f}", At(base.serving_gpu_hours_by_type, t) / nb),
        fmt::format("{:.0f}", At(seedance.serving_gpu_hours_by_type, t) / ns),
        bound != nullptr ? fmt::format("{:.0f}", At(bound->gpu_hours_by_use, t)[1] / nl) : "");
    const auto free = [&](const FleetWeekOutcome& o, double n) {
      return fmt::format("{:.0f} <small>(of them while training ran on the cloud: {:.0f})</small>",
                         At(o.owned_free_gpu_hours_by_type, t) / n, At(o.owned_free_while_cloud_training_gpu_hours_by_type, t) / n);
    };
    row(types[t] + " committed: GPU-h free", free(base, nb), free(seedance, ns),
        bound != nullptr ? fmt::format("{:.0f} used of the committed GPU-h", At(bound->pool_gpu_hours, t)[0] / nl) : "");
  }
  row("training GPU-h lost to preemptions and moves, and restoring",
      fmt::format("{:.0f} + {:.0f}", base.training_lost_gpu_hours / nb, base.training_restore_gpu_hours / nb),
      fmt::format("{:.0f} + {:.0f}", seedance.training_lost_gpu_hours / ns, seedance.training_restore_gpu_hours / ns),
      bound != nullptr ? "0" : "");
  h += "</table>\n";
  return h;
}

}  // namespace seedance::fleet
