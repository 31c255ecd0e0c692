// History to a workload: jobs read back from samples, kube-state-metrics and pod events, clipped
// to the window; the speed rule.
#include "seedance/ledger/workload_history.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "seedance/ledger/node_inventory.h"
#include "seedance/telemetry/parse.h"

namespace seedance::ledger {
namespace {

constexpr std::int64_t kT0 = 1'795'910'400'000;  // 2026-11-29T00:00:00Z
constexpr std::int64_t kMin = 60'000;

std::unique_ptr<Ledger> OpenFresh(const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".db";
  std::filesystem::remove(path);
  auto l = Ledger::Open(path);
  EXPECT_TRUE(l.has_value());
  return std::move(*l);
}

void Ingest(Ledger& ledger, const std::string& text) {
  auto w = ledger.NewSampleWriter("test", 1000);
  ASSERT_TRUE(w.has_value());
  std::istringstream in(text);
  telemetry::ParseOptions opt;
  opt.source = "test";
  telemetry::ParseStats stats;
  ASSERT_TRUE(telemetry::ParseStream(telemetry::InputFormat::kPrometheus, in, opt, **w, stats).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  ASSERT_EQ(stats.rejected, 0u);
}

std::string Util(int gpu, const std::string& pod, double v, std::int64_t ts) {
  return "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"" + std::to_string(gpu) + "\",UUID=\"GPU-" + std::to_string(gpu) +
         "\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\",namespace=\"ns\",pod=\"" + pod + "\"} " +
         std::to_string(v) + " " + std::to_string(ts) + "\n";
}

TEST(WorkloadHistoryTest, SamplesKubeStateMetricsAndEvents) {
  auto ledger = OpenFresh("workload_history");
  std::string text;
  // p1: GPUs 0 and 1 sampled 00:00..00:09 (10 samples); kube-state-metrics says it started at
  // 00:00:30 and completed at 00:10:00 and asked for 2 GPUs.
  for (int m = 0; m < 10; ++m) {
    text += Util(0, "p1", 0.5, kT0 + m * kMin);
    text += Util(1, "p1", 0.5, kT0 + m * kMin);
  }
  text += "kube_pod_container_resource_requests{namespace=\"ns\",pod=\"p1\",container=\"c\",node=\"n1\","
          "resource=\"nvidia_com_gpu\",unit=\"integer\"} 2 " + std::to_string(kT0) + "\n";
  text += "kube_pod_container_resource_requests{namespace=\"ns\",pod=\"p1\",container=\"c\",node=\"n1\","
          "resource=\"cpu\",unit=\"core\"} 16 " + std::to_string(kT0) + "\n";
  text += "kube_pod_start_time{namespace=\"ns\",pod=\"p1\"} " + std::to_string(kT0 / 1000 + 30) + " " +
          std::to_string(kT0 + kMin) + "\n";
  text += "kube_pod_completion_time{namespace=\"ns\",pod=\"p1\"} " + std::to_string(kT0 / 1000 + 600) + " " +
          std::to_string(kT0 + 10 * kMin) + "\n";
  // p2: one GPU sampled 00:50..00:69, past the window's end at 01:00 (clipped).
  for (int m = 50; m < 70; ++m) text += Util(2, "p2", 0.9, kT0 + m * kMin);
  Ingest(*ledger, text);
  // p3: only a pod event on two GPUs, 00:20..00:30.
  ProcessEvent a;
  a.gpu_uuid = "GPU-7";
  a.start_ms = kT0 + 20 * kMin;
  a.end_ms = kT0 + 30 * kMin;
  a.pod = "p3";
  a.namespace_name = "other";
  a.node = "n2";
  ProcessEvent b = a;
  b.gpu_uuid = "GPU-8";
  ASSERT_TRUE(ledger->AddEvents(std::vector<ProcessEvent>{a, b}).ok());

  auto jobs = ReadRanJobs(*ledger, kT0, kT0 + 60 * kMin, kMin);
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 3u);
  const RanJob& p1 = (*jobs)[0];
  EXPECT_EQ(p1.pod, "p1");
  EXPECT_EQ(p1.gpus, 2);
  EXPECT_EQ(p1.start_ms, kT0 + 30'000);  // kube-state-metrics' times win over the samples'
  EXPECT_EQ(p1.end_ms, kT0 + 600'000);
  EXPECT_EQ(p1.node, "n1");
  EXPECT_EQ(gpu::GpuAt(p1.gpu).name, "H100");
  EXPECT_NEAR(p1.mean_util, 0.5, 1e-9);
  EXPECT_EQ(p1.sampled_gpu_ms, 20 * kMin);
  EXPECT_EQ(p1.evidence, "dcgm+kube-state-metrics");
  EXPECT_FALSE(p1.clipped);
  const RanJob& p3 = (*jobs)[1];
  EXPECT_EQ(p3.pod, "p3");
  EXPECT_EQ(p3.namespace_name, "other");
  EXPECT_EQ(p3.gpus, 2);
  EXPECT_EQ(p3.start_ms, kT0 + 20 * kMin);
  EXPECT_EQ(p3.end_ms, kT0 + 30 * kMin);
  EXPECT_EQ(p3.evidence, "events");
  const RanJob& p2 = (*jobs)[2];
  EXPECT_EQ(p2.pod, "p2");
  EXPECT_EQ(p2.start_ms, kT0 + 50 * kMin);
  EXPECT_EQ(p2.end_ms, kT0 + 60 * kMin);
  EXPECT_TRUE(p2.clipped);
  EXPECT_DOUBLE_EQ(p2.gpu_hours(), 10.0 / 60.0);

  EXPECT_FALSE(ReadRanJobs(*ledger, kT0, kT0, kMin).has_value());
}

// Issue 38: a pod kube-state-metrics saw start but never complete has no known end (its samples
// stop): it is clipped, not a job that ended there.
TEST(WorkloadHistoryTest, APodWithoutCompletionTimeIsClipped) {
  auto ledger = OpenFresh("workload_history_no_completion");
  std::string text;
  for (int m = 0; m < 10; ++m) {
    text += Util(0, "done", 0.5, kT0 + m * kMin);
    text += Util(1, "open", 0.5, kT0 + m * kMin);
  }
  for (const char* pod : {"done", "open"}) {
    text += std::string("kube_pod_start_time{namespace=\"ns\",pod=\"") + pod + "\"} " + std::to_string(kT0 / 1000) +
            " " + std::to_string(kT0) + "\n";
  }
  text += "kube_pod_completion_time{namespace=\"ns\",pod=\"done\"} " + std::to_string(kT0 / 1000 + 600) + " " +
          std::to_string(kT0 + 10 * kMin) + "\n";
  Ingest(*ledger, text);
  auto jobs = ReadRanJobs(*ledger, kT0, kT0 + 60 * kMin, kMin);
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 2u);
  for (const RanJob& j : *jobs) EXPECT_EQ(j.clipped, j.pod == "open") << j.pod;
}

// The series-key label reader the node inventory and the workload export share.
TEST(WorkloadHistoryTest, KeyLabelsReadEveryLabelAndSurviveBadKeys) {
  const auto l = KeyLabels(R"(kube_node_labels{node="n1",label_karpenter_sh_capacity_type="spot",q="a\"b"})");
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0], (std::pair<std::string, std::string>{"node", "n1"}));
  EXPECT_EQ(l[1].first, "label_karpenter_sh_capacity_type");
  EXPECT_EQ(l[1].second, "spot");
  EXPECT_EQ(l[2].second, "a\"b");
  EXPECT_TRUE(KeyLabels("up").empty());
  EXPECT_TRUE(KeyLabels("m{}").empty());
  EXPECT_EQ(KeyLabels("m{a=\"x").size(), 1u);  // unterminated: read to the end, no overrun
  EXPECT_EQ(KeyLabels("m{a=\"x\\").size(), 1u);
}

TEST(WorkloadHistoryTest, SpeedRule) {
  RanJob j;
  j.gpu = *gpu::ParseGpuName("A100-80G", gpu::NameMatch::kCanonical);
  const gpu::GpuIndex h100 = *gpu::ParseGpuName("H100", gpu::NameMatch::kCanonical);
  const gpu::GpuIndex l4 = *gpu::ParseGpuName("L4", gpu::NameMatch::kCanonical);
  const double r = gpu::GpuAt(h100).fp16_tflops / gpu::GpuAt(j.gpu).fp16_tflops;
  EXPECT_EQ(StepsPerSecondOn(j, j.gpu), 1.0);
  EXPECT_NEAR(StepsPerSecondOn(j, h100), r, 1e-12);  // utilization unknown: all of it scales
  j.mean_util = 0.5;
  EXPECT_NEAR(StepsPerSecondOn(j, h100), 1.0 / (0.5 / r + 0.5), 1e-12);
  j.mean_util = 0;
  EXPECT_NEAR(StepsPerSecondOn(j, h100), 1.0, 1e-12);  // nothing on the GPU to speed up
  j.peak_fb_mib = 30'000;  // over an L4's 24 GiB
  EXPECT_EQ(StepsPerSecondOn(j, l4), 0.0);
  j.peak_fb_mib = 20'000;
  EXPECT_GT(StepsPerSecondOn(j, l4), 0.0);
}

}  // namespace
}  // namespace seedance::ledger
