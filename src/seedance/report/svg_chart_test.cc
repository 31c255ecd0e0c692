#include "seedance/report/svg_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "seedance/report/testing/xml_check.h"

namespace seedance::report {
namespace {

std::vector<ChartSeries> TwoSeries() {
  ChartSeries a{.name = "FGD", .points = {{0, 100}, {50, 50}, {100, 5}}, .color = "#e15759"};
  ChartSeries b{.name = "Seedance <new> & \"best\"",
                .points = {{0, 100}, {50, std::nan("")}, {60, 40}, {100, 3}},
                .color = "#59a14f",
                .dashed = true};
  return {a, b};
}

LineChartSpec Spec() {
  return {.id = "t",
          .title = "Unallocated & arrived",
          .x = {.label = "arrived %", .min = 0, .max = 130, .tick_step = 10},
          .y = {.label = "unallocated %"}};
}

TEST(SvgChartTest, IsWellFormedAndNamesEverySeries) {
  const std::string svg = RenderLineChart(Spec(), TwoSeries());
  EXPECT_EQ(testing::CheckXml(svg), "");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find(">FGD<"), std::string::npos);
  EXPECT_NE(svg.find("Seedance &lt;new&gt; &amp; &quot;best&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("<new>"), std::string::npos);
  EXPECT_NE(svg.find("Unallocated &amp; arrived"), std::string::npos);
  EXPECT_NE(svg.find(">arrived %<"), std::string::npos);
  EXPECT_NE(svg.find(">unallocated %<"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("http"), std::string::npos);  // inline form: no namespace URL either
}

TEST(SvgChartTest, DrawsTicksAtTheRequestedStepAndAutoScalesY) {
  const std::string svg = RenderLineChart(Spec(), TwoSeries());
  for (const char* tick : {">0<", ">10<", ">120<", ">130<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(svg.find(">140<"), std::string::npos);
  // y is taken from the data (3..100) and widened to whole ticks of 20: 0..100.
  EXPECT_NE(svg.find(">100</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">-0<"), std::string::npos);
}

TEST(SvgChartTest, ANanBreaksTheLine) {
  const std::string svg = RenderLineChart(Spec(), TwoSeries());
  std::size_t polylines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos;
       at = svg.find("<polyline", at + 1)) {
    ++polylines;
  }
  EXPECT_EQ(polylines, 2u);                           // FGD: one line; Seedance: 60..100
  EXPECT_NE(svg.find("<circle"), std::string::npos);  // Seedance's lone first point
}

TEST(SvgChartTest, IsDeterministicAndStandaloneAddsTheNamespace) {
  LineChartSpec spec = Spec();
  EXPECT_EQ(RenderLineChart(spec, TwoSeries()), RenderLineChart(spec, TwoSeries()));
  spec.standalone = true;
  spec.id = "bad id\"<";
  const std::string svg = RenderLineChart(spec, TwoSeries());
  EXPECT_NE(svg.find(R"(xmlns="http://www.w3.org/2000/svg")"), std::string::npos);
  EXPECT_NE(svg.find(R"(id="bad_id__-plot")"), std::string::npos);
  EXPECT_EQ(testing::CheckXml(svg), "");
}

TEST(SvgChartTest, EmptyChartStillRenders) {
  const std::string svg = RenderLineChart(LineChartSpec{}, {});
  EXPECT_EQ(testing::CheckXml(svg), "");
}

}  // namespace
}  // namespace seedance::report
