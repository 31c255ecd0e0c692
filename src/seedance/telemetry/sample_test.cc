#include "seedance/telemetry/sample.h"

#include <gtest/gtest.h>

#include "seedance/telemetry/parse.h"

namespace seedance::telemetry {
namespace {

TEST(SampleTest, IdentifyEntityAcceptsEveryCasingAndConvention) {
  std::vector<LabelView> dcgm_old = {{"gpu", "0"},
                                     {"UUID", "GPU-1"},
                                     {"modelName", "NVIDIA TITAN V"},
                                     {"Hostname", "dcgm-exporter-lcxpl"},
                                     {"container", "c"},
                                     {"namespace", "ns"},
                                     {"pod", "p"}};
  EntityView e = IdentifyEntity(dcgm_old);
  EXPECT_EQ(e.gpu_uuid, "GPU-1");
  EXPECT_EQ(e.gpu, "0");
  EXPECT_EQ(e.model, "NVIDIA TITAN V");
  EXPECT_EQ(e.hostname, "dcgm-exporter-lcxpl");
  EXPECT_EQ(e.pod, "p");
  EXPECT_EQ(e.namespace_name, "ns");
  EXPECT_EQ(e.container, "c");

  std::vector<LabelView> dcgm_new = {{"uuid", "GPU-2"}, {"hostname", "node-7"},
                                     {"pod_name", "p2"}, {"pod_namespace", "ns2"},
                                     {"container_name", "c2"}, {"hpc_job", "4711"}};
  e = IdentifyEntity(dcgm_new);
  EXPECT_EQ(e.gpu_uuid, "GPU-2");
  EXPECT_EQ(e.hostname, "node-7");
  EXPECT_EQ(e.pod, "p2");
  EXPECT_EQ(e.namespace_name, "ns2");
  EXPECT_EQ(e.container, "c2");
  EXPECT_EQ(e.job, "4711");

  std::vector<Label> otel = {{"hw.id", "GPU-3"}, {"k8s.node.name", "n3"},
                             {"k8s.pod.name", "p3"}, {"k8s.namespace.name", "ns3"},
                             {"hw.model", "H100"}, {"process.pid", "42"}};
  Entity o = IdentifyEntity(otel);
  EXPECT_EQ(o.gpu_uuid, "GPU-3");
  EXPECT_EQ(o.hostname, "n3");
  EXPECT_EQ(o.pod, "p3");
  EXPECT_EQ(o.namespace_name, "ns3");
  EXPECT_EQ(o.model, "H100");
  EXPECT_EQ(o.pid, "42");
}

TEST(SampleTest, LookupFieldScalesToCanonicalUnits) {
  EXPECT_EQ(LookupField("DCGM_FI_DEV_GPU_UTIL").field, Field::kGpuUtil);
  EXPECT_DOUBLE_EQ(LookupField("DCGM_FI_DEV_GPU_UTIL").scale, 0.01);
  EXPECT_EQ(LookupField("DCGM_FI_PROF_GR_ENGINE_ACTIVE").field, Field::kGrEngineActive);
  EXPECT_EQ(LookupField("hw.gpu.memory.usage").field, Field::kFbUsed);
  EXPECT_DOUBLE_EQ(LookupField("hw.gpu.memory.usage").scale * 1048576.0, 1.0);
  EXPECT_EQ(LookupField("http_requests_total").field, Field::kOther);
  EXPECT_EQ(FieldName(Field::kFbUsed), "fb_used");
  EXPECT_EQ(FieldUnit(Field::kFbUsed), "MiB");
}

TEST(SampleTest, DcgmBlankSentinelsAreRecognised) {
  EXPECT_TRUE(IsDcgmBlank(9223372036854775794.0));
  EXPECT_TRUE(IsDcgmBlank(9223372036854775792.0));
  EXPECT_TRUE(IsDcgmBlank(2147483632.0));
  EXPECT_TRUE(IsDcgmBlank(140737488355328.0));
  EXPECT_FALSE(IsDcgmBlank(139.0));
  EXPECT_FALSE(IsDcgmBlank(302.206));
  EXPECT_FALSE(IsDcgmBlank(5e12));  // energy in mJ can be large
}

TEST(SampleTest, CatalogModelNames) {
  EXPECT_EQ(CatalogModelName("NVIDIA H100 80GB HBM3"), "H100");
  EXPECT_EQ(CatalogModelName("NVIDIA A100-SXM4-80GB"), "A100-80G");
  EXPECT_EQ(CatalogModelName("NVIDIA A100-SXM4-40GB"), "A100");
  EXPECT_EQ(CatalogModelName("Tesla V100-SXM2-32GB"), "V100M32");
  EXPECT_EQ(CatalogModelName("Tesla V100-SXM2-16GB"), "V100M16");  // the catalog's 16 GB row
  EXPECT_EQ(CatalogModelName("nvidia a10g"), "A10G");              // any case
  EXPECT_EQ(CatalogModelName("NVIDIA GeForce RTX 2080 Ti"), "2080Ti");
  EXPECT_EQ(CatalogModelName("NVIDIA A10G"), "A10G");
  EXPECT_EQ(CatalogModelName("NVIDIA L40S"), "L40S");
  EXPECT_EQ(CatalogModelName("NVIDIA L4"), "L4");
  EXPECT_EQ(CatalogModelName("Quadro RTX 6000"), "RTX6000");
  EXPECT_EQ(CatalogModelName("NVIDIA TITAN V"), "");
}

TEST(SampleTest, SeriesKeySortsAndEscapes) {
  std::vector<LabelView> a = {{"b", "x\"y"}, {"a", "1\\2\n"}};
  std::vector<LabelView> b = {{"a", "1\\2\n"}, {"b", "x\"y"}};
  EXPECT_EQ(SeriesKey("m", a), "m{a=\"1\\\\2\\n\",b=\"x\\\"y\"}");
  EXPECT_EQ(SeriesKey("m", a), SeriesKey("m", b));
}

TEST(SampleTest, TimestampsRoundTrip) {
  EXPECT_EQ(FormatTimestamp(1795910400000), "2026-11-29T00:00:00Z");
  EXPECT_EQ(FormatTimestamp(1395066363000), "2014-03-17T14:26:03Z");
  EXPECT_EQ(FormatTimestamp(1500), "1970-01-01T00:00:01.500Z");
  EXPECT_EQ(*ParseTimestamp("2026-11-29T00:00:00Z"), 1795910400000);
  EXPECT_EQ(*ParseTimestamp("2026-11-29"), 1795910400000);
  EXPECT_EQ(*ParseTimestamp("2026-11-29T00:00:01.25Z"), 1795910401250);
  EXPECT_EQ(*ParseTimestamp("1795910400"), 1795910400000);
  EXPECT_FALSE(ParseTimestamp("2026-13-01").has_value());
  EXPECT_FALSE(ParseTimestamp("yesterday").has_value());
  EXPECT_FALSE(ParseTimestamp("2026-11-29T00:00:00").has_value());
}

TEST(SampleTest, InputFormatNames) {
  EXPECT_EQ(*ParseInputFormat("prom"), InputFormat::kPrometheus);
  EXPECT_EQ(*ParseInputFormat("dcgm"), InputFormat::kDcgm);
  EXPECT_EQ(*ParseInputFormat("otlp"), InputFormat::kOtlpJson);
  EXPECT_EQ(*ParseInputFormat("openmetrics"), InputFormat::kOpenMetrics);
  auto bad = ParseInputFormat("csv");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seedance::telemetry
