#include "seedance/audit/telemetry_adapter.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/audit/audit.h"
#include "seedance/audit/synthetic.h"

namespace seedance::audit {
namespace {

constexpr std::int64_t kNow = 1'790'000'000;

TEST(TelemetryAdapterTest, DcgmTextRoundTripsIntoTheSameAudit) {
  Rng rng(8);
  SyntheticNode n;
  n.host = "gpu-node-3";
  n.gpus = 2;
  n.fault = SyntheticFault::kXid;
  n.fault_start_s = kNow - 2 * 3600;
  const NodeTelemetry direct = GenerateNodeTelemetry(n, kNow - 50 * 3600, kNow, 60, rng);
  const std::string text = RenderDcgmExposition(direct);
  EXPECT_EQ(DetectFormat(text), telemetry::InputFormat::kDcgm);
  SeriesBuilder b;
  telemetry::ParseStats stats;
  telemetry::ParseText(telemetry::InputFormat::kDcgm, text, {}, b, stats);
  ASSERT_EQ(stats.rejected, 0u) << stats.rejections[0].ToString();
  auto nodes = b.Finish();
  ASSERT_TRUE(nodes.has_value()) << nodes.error().ToString();
  ASSERT_EQ(nodes->size(), 1u);
  const NodeTelemetry& parsed = (*nodes)[0];
  EXPECT_EQ(parsed.host, "gpu-node-3");
  ASSERT_EQ(parsed.gpus.size(), 2u);
  EXPECT_EQ(parsed.gpus[0].model_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(parsed.gpus[0].driver, "550.54.15");
  EXPECT_EQ(parsed.gpus[0].t_s, direct.gpus[0].t_s);
  for (std::size_t f = 0; f < kFieldCount; ++f) {
    ASSERT_EQ(parsed.gpus[1].columns[f].size(), direct.gpus[1].columns[f].size()) << f;
    for (std::size_t i = 0; i < direct.gpus[1].t_s.size(); i += 97) {
      EXPECT_FLOAT_EQ(parsed.gpus[1].columns[f][i], direct.gpus[1].columns[f][i]) << f;
    }
  }
  auto a = AuditFleet(*nodes, AuditConfig{}, kNow);
  auto d = AuditFleet({direct}, AuditConfig{}, kNow);
  EXPECT_EQ(a->nodes[0].outcome, AuditOutcome::kFail);
  EXPECT_NEAR(*a->nodes[0].metrics.energy_ratio_kw_per_tops,
              *d->nodes[0].metrics.energy_ratio_kw_per_tops, 1e-6);
  EXPECT_EQ(*a->nodes[0].metrics.xid_events, *d->nodes[0].metrics.xid_events);
}

TEST(TelemetryAdapterTest, MissingTimestampOrHostnameIsNamed) {
  SeriesBuilder b;
  telemetry::ParseStats stats;
  telemetry::ParseOptions o;
  o.source = "scrape.prom";
  telemetry::ParseText(telemetry::InputFormat::kDcgm,
                       "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA L4\","
                       "Hostname=\"h\"} 50\n",
                       o, b, stats);
  auto r = b.Finish();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(),
            "scrape.prom:1: DCGM_FI_DEV_POWER_USAGE: field 'timestamp': the sample has none "
            "(record scrapes with timestamps)");
  SeriesBuilder b2;
  telemetry::ParseText(telemetry::InputFormat::kDcgm,
                       "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-1\"} 50 1000\n", o, b2, stats);
  EXPECT_NE(b2.Finish().error().message().find("field 'hostname'"), std::string::npos);
}

// The text formats carry NaN and ±Inf (prometheus/common keeps them): the audit sees a missing
// point, not an infinite power.
TEST(TelemetryAdapterTest, NonFiniteValuesAreMissingPoints) {
  SeriesBuilder b;
  telemetry::ParseStats stats;
  telemetry::ParseText(telemetry::InputFormat::kPrometheus,
                       "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"h\"} +Inf 1000\n"
                       "DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"h\"} 70 61000\n",
                       {}, b, stats);
  ASSERT_EQ(stats.rejected, 0u);
  auto nodes = b.Finish();
  ASSERT_TRUE(nodes.has_value()) << nodes.error().ToString();
  ASSERT_EQ(nodes->size(), 1u);
  ASSERT_EQ((*nodes)[0].gpus.size(), 1u);
  bool finite_seen = false;
  for (const auto& column : (*nodes)[0].gpus[0].columns) {
    for (float v : column) {
      EXPECT_FALSE(std::isinf(v));
      finite_seen = finite_seen || v == 70.0f;
    }
  }
  EXPECT_TRUE(finite_seen);
}

TEST(TelemetryAdapterTest, DetectsFormats) {
  EXPECT_EQ(DetectFormat("  {\"resourceMetrics\":[]}"), telemetry::InputFormat::kOtlpJson);
  EXPECT_EQ(DetectFormat("a 1\n# EOF\n"), telemetry::InputFormat::kOpenMetrics);
  EXPECT_EQ(DetectFormat("up 1\n"), telemetry::InputFormat::kPrometheus);
}

}  // namespace
}  // namespace seedance::audit
