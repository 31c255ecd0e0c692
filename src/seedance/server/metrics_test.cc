#include "seedance/server/metrics.h"

#include <gtest/gtest.h>

#include <map>

#include "seedance/telemetry/parse.h"

namespace seedance::server {
namespace {

// Parses `text` as Prometheus text 0.0.4; returns "name{labels}" -> value, and the stats.
std::map<std::string, double> ParseBack(const std::string& text, telemetry::ParseStats& stats) {
  telemetry::CollectingSink sink;
  telemetry::ParseText(telemetry::InputFormat::kPrometheus, text, {}, sink, stats);
  std::map<std::string, double> out;
  for (const auto& s : sink.samples) {
    std::string key = s.metric + "{";
    for (const auto& l : s.labels) key += l.name + "=" + l.value + ",";
    out[key + "}"] = s.value;
  }
  return out;
}

TEST(MetricsTest, RenderParsesBackWithTheRightValues) {
  Metrics m;
  m.DeclareCounter("seedance_decisions_total", "Decisions by verb and result.\nSecond line \\ end");
  m.DeclareGauge("seedance_unit_cost_usd", "Unit cost.");
  m.DeclareHistogram("seedance_decision_seconds", "Latency.", {0.005, 0.001, 0.01});
  m.Inc("seedance_decisions_total", {{"verb", "filter"}, {"result", "ok"}});
  m.Inc("seedance_decisions_total", {{"verb", "filter"}, {"result", "ok"}}, 2);
  m.Inc("seedance_decisions_total", {{"verb", "bind"}, {"result", "quote\" back\\slash\nnewline"}});
  m.Set("seedance_unit_cost_usd", {{"tenant", "a"}}, 1.25);
  m.Set("seedance_unit_cost_usd", {}, -0.5);
  m.Observe("seedance_decision_seconds", {{"verb", "filter"}}, 0.0005);
  m.Observe("seedance_decision_seconds", {{"verb", "filter"}}, 0.003);
  m.Observe("seedance_decision_seconds", {{"verb", "filter"}}, 5);

  telemetry::ParseStats stats;
  auto v = ParseBack(m.Render(), stats);
  EXPECT_EQ(stats.rejected, 0u) << (stats.rejections.empty() ? "" : stats.rejections[0].ToString());
  EXPECT_EQ(v["seedance_decisions_total{verb=filter,result=ok,}"], 3);
  EXPECT_EQ(v["seedance_decisions_total{verb=bind,result=quote\" back\\slash\nnewline,}"], 1);
  EXPECT_EQ(v["seedance_unit_cost_usd{tenant=a,}"], 1.25);
  EXPECT_EQ(v["seedance_unit_cost_usd{}"], -0.5);
  // Buckets are cumulative, sorted by bound, and end with +Inf.
  EXPECT_EQ(v["seedance_decision_seconds_bucket{verb=filter,le=0.001,}"], 1);
  EXPECT_EQ(v["seedance_decision_seconds_bucket{verb=filter,le=0.005,}"], 2);
  EXPECT_EQ(v["seedance_decision_seconds_bucket{verb=filter,le=0.01,}"], 2);
  EXPECT_EQ(v["seedance_decision_seconds_bucket{verb=filter,le=+Inf,}"], 3);
  EXPECT_DOUBLE_EQ(v["seedance_decision_seconds_sum{verb=filter,}"], 5.0035);
  EXPECT_EQ(v["seedance_decision_seconds_count{verb=filter,}"], 3);
  EXPECT_EQ(stats.samples, 10u);

  EXPECT_EQ(m.Value("seedance_decisions_total", {{"verb", "filter"}, {"result", "ok"}}), 3);
  EXPECT_EQ(m.Value("seedance_decision_seconds", {{"verb", "filter"}}), 3);  // a histogram's count
  EXPECT_EQ(m.Value("seedance_decisions_total", {{"verb", "prioritize"}}), 0);
  EXPECT_EQ(m.Value("absent", {}), 0);
}

TEST(MetricsTest, RenderIsExactAndDeterministic) {
  Metrics m;
  m.DeclareGauge("b_gauge", "B.");
  m.DeclareCounter("a_total", "A \\ help");
  m.Inc("a_total", {{"k", "z"}});
  m.Inc("a_total", {{"k", "a"}}, 0.5);
  m.Set("b_gauge", {}, 1e21);
  EXPECT_EQ(m.Render(),
            "# HELP a_total A \\\\ help\n"
            "# TYPE a_total counter\n"
            "a_total{k=\"a\"} 0.5\n"
            "a_total{k=\"z\"} 1\n"
            "# HELP b_gauge B.\n"
            "# TYPE b_gauge gauge\n"
            "b_gauge 1e+21\n");
}

TEST(MetricsTest, UndeclaredAndMisusedSeriesAreIgnored) {
  Metrics m;
  m.DeclareCounter("c_total", "C.");
  m.Inc("nope_total", {});
  m.Set("c_total", {}, 5);           // Set is for gauges
  m.Inc("c_total", {}, -1);          // counters never go down
  m.Observe("c_total", {}, 1);       // not a histogram
  m.DeclareCounter("c_total", "again");  // a no-op
  EXPECT_EQ(m.Value("c_total", {}), 0);
  EXPECT_EQ(m.Render(), "# HELP c_total C.\n# TYPE c_total counter\n");
}

TEST(MetricsTest, AFamilyStopsGrowingAtTenThousandSeries) {
  Metrics m;
  m.DeclareCounter("per_client_total", "One series per client.");
  for (int i = 0; i < 10'005; ++i) m.Inc("per_client_total", {{"client", std::to_string(i)}});
  m.Inc("per_client_total", {{"client", "0"}});  // an existing series still counts
  EXPECT_EQ(m.Value("per_client_total", {{"client", "0"}}), 2);
  EXPECT_EQ(m.Value("per_client_total", {{"client", "10004"}}), 0);
  telemetry::ParseStats stats;
  auto v = ParseBack(m.Render(), stats);
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ(v["seedance_metrics_series_dropped_total{}"], 5);
  EXPECT_EQ(stats.samples, 10'001u);
}

}  // namespace
}  // namespace seedance::server
