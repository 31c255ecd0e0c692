// History to a workload: jobs read back from samples, kube-state-metrics and pod events, clipped
// to the window; the speed rule.
#include "seedance/ledger/workload_history.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

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


// Issue 38, the history's shape: a 2-pod PyTorchJob is one gang (GPUs summed, first start to last
// end, submit = the earliest kube_pod_created, both nodes), a ReplicaSet's pods are service rows
// of their Deployment (kube_replicaset_owner), a StatefulSet pod is a notebook session with its
// busy time, and a node labelled karpenter.sh/capacity-type=spot marks its rows spot.
TEST(WorkloadHistoryTest, GangsServicesNotebooksSubmitAndSpot) {
  auto ledger = OpenFresh("workload_history_shape");
  std::string text;
  const auto sample = [&](int gpu, const std::string& node, const std::string& pod, double v, int m) {
    text += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"" + std::to_string(gpu) + "\",UUID=\"GPU-" + node + "-" +
            std::to_string(gpu) + "\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"" + node +
            "\",namespace=\"ns\",pod=\"" + pod + "\"} " + std::to_string(v) + " " + std::to_string(kT0 + m * kMin) + "\n";
  };
  const auto ksm = [&](const std::string& metric, const std::string& labels, double v, int m) {
    text += metric + "{" + labels + "} " + fmt::format("{}", v) + " " + std::to_string(kT0 + m * kMin) + "\n";
  };
  // Gang: pods w0 on n1 (minutes 5..14) and w1 on n2 (6..15), created at minutes 2 and 3.
  for (int m = 5; m < 15; ++m) sample(0, "n1", "w0", 0.8, m);
  for (int m = 6; m < 16; ++m) sample(0, "n2", "w1", 0.8, m);
  // Service: replicas r-a (0..29) and r-b (10..19) of replica set api-5d8f of deployment api.
  for (int m = 0; m < 30; ++m) sample(1, "n1", "api-5d8f-a", 0.3, m);
  for (int m = 10; m < 20; ++m) sample(1, "n2", "api-5d8f-b", 0.3, m);
  // Notebook: busy 3 of its 10 minutes, on the spot node n3.
  for (int m = 0; m < 10; ++m) sample(0, "n3", "nb-0", m < 3 ? 0.6 : 0.0, m);
  for (const auto& [pod, start, end, created, kind, owner] :
       std::vector<std::tuple<std::string, int, int, int, std::string, std::string>>{
           {"w0", 5, 15, 2, "PyTorchJob", "llama"}, {"w1", 6, 16, 3, "PyTorchJob", "llama"},
           {"api-5d8f-a", 0, 30, 0, "ReplicaSet", "api-5d8f"}, {"api-5d8f-b", 10, 20, 9, "ReplicaSet", "api-5d8f"},
           {"nb-0", 0, 10, 0, "StatefulSet", "nb"}}) {
    const std::string pl = "namespace=\"ns\",pod=\"" + pod + "\"";
    ksm("kube_pod_created", pl, static_cast<double>(kT0 / 1000 + created * 60), start);
    ksm("kube_pod_start_time", pl, static_cast<double>(kT0 / 1000 + start * 60), start);
    ksm("kube_pod_completion_time", pl, static_cast<double>(kT0 / 1000 + end * 60), end);
    ksm("kube_pod_owner", pl + ",owner_kind=\"" + kind + "\",owner_name=\"" + owner + "\",owner_is_controller=\"true\"", 1, start);
  }
  // w0 waited: its one-GPU request is two series (node "" while pending, then n1), one request.
  ksm("kube_pod_container_resource_requests",
      "namespace=\"ns\",pod=\"w0\",container=\"main\",node=\"\",resource=\"nvidia_com_gpu\",unit=\"integer\"", 1, 2);
  ksm("kube_pod_container_resource_requests",
      "namespace=\"ns\",pod=\"w0\",container=\"main\",node=\"n1\",resource=\"nvidia_com_gpu\",unit=\"integer\"", 1, 5);
  ksm("kube_replicaset_owner", "namespace=\"ns\",replicaset=\"api-5d8f\",owner_kind=\"Deployment\",owner_name=\"api\"", 1, 0);
  ksm("kube_node_labels", "node=\"n3\",label_karpenter_sh_capacity_type=\"spot\"", 1, 0);
  ksm("kube_node_labels", "node=\"n1\",label_karpenter_sh_capacity_type=\"on-demand\"", 1, 0);
  Ingest(*ledger, text);
  auto pods = ReadRanJobs(*ledger, kT0, kT0 + 60 * kMin, kMin);
  ASSERT_TRUE(pods.has_value()) << pods.error().message();
  ASSERT_EQ(pods->size(), 5u);
  const std::vector<RanJob> jobs = ShapeJobs(*pods);
  ASSERT_EQ(jobs.size(), 4u);
  std::map<std::string, const RanJob*> by;
  for (const RanJob& j : jobs) by[j.pod] = &j;
  ASSERT_TRUE(by.count("PyTorchJob/llama"));
  const RanJob& g = *by["PyTorchJob/llama"];
  EXPECT_EQ(g.kind, "batch");
  EXPECT_EQ(g.pods, 2);
  EXPECT_EQ(g.gpus, 2);
  EXPECT_EQ(g.start_ms, kT0 + 5 * kMin);
  EXPECT_EQ(g.end_ms, kT0 + 16 * kMin);
  EXPECT_EQ(g.submit_ms, kT0 + 2 * kMin);
  EXPECT_EQ(g.nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_FALSE(g.spot);
  ASSERT_TRUE(by.count("api-5d8f-a") && by.count("api-5d8f-b"));
  EXPECT_EQ(by["api-5d8f-b"]->kind, "service");
  EXPECT_EQ(by["api-5d8f-b"]->owner_name, "api");
  EXPECT_EQ(by["api-5d8f-b"]->submit_ms, kT0 + 9 * kMin);
  ASSERT_TRUE(by.count("nb-0"));
  const RanJob& nb = *by["nb-0"];
  EXPECT_EQ(nb.kind, "notebook");
  EXPECT_TRUE(nb.spot);
  EXPECT_EQ(nb.busy_ms, 3 * kMin);
  // Replicas over time: 1 at 00:00, 2 at 00:10, 1 at 00:20, 0 at 00:30.
  const auto replicas = ServiceReplicasOverTime(jobs, kT0 + 60 * kMin);
  ASSERT_EQ(replicas.size(), 4u);
  const int want[] = {1, 2, 1, 0};
  const int at[] = {0, 10, 20, 30};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(replicas[i].deployment, "api");
    EXPECT_EQ(replicas[i].gpu_type, "H100");
    EXPECT_EQ(replicas[i].time_ms, kT0 + at[i] * kMin);
    EXPECT_EQ(replicas[i].replicas, want[i]);
  }
}

TEST(WorkloadHistoryTest, KindsAndSpotLabels) {
  EXPECT_EQ(JobKindOf("Job", {}), "batch");
  EXPECT_EQ(JobKindOf("", {{"label_component", "singleuser-server"}}), "notebook");
  EXPECT_EQ(JobKindOf("", {{"label_notebook_name", "alice"}}), "notebook");
  EXPECT_EQ(JobKindOf("Deployment", {}), "service");
  EXPECT_TRUE(IsGangOwnerKind("MPIJob"));
  EXPECT_FALSE(IsGangOwnerKind("ReplicaSet"));
  EXPECT_TRUE(IsSpotNode({{"label_eks_amazonaws_com_capacityType", "SPOT"}}));
  EXPECT_TRUE(IsSpotNode({{"label_cloud_google_com_gke_spot", "true"}}));
  EXPECT_FALSE(IsSpotNode({{"label_karpenter_sh_capacity_type", "on-demand"}}));
}

}  // namespace
}  // namespace seedance::ledger
