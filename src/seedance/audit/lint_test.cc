#include "seedance/audit/lint.h"

#include <gtest/gtest.h>

namespace seedance::audit {
namespace {

constexpr const char* kManifest = R"(apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer
spec:
  template:
    spec:
      initContainers:
      - name: fetch
        image: busybox
      containers:
      - name: main
        image: trainer:1
        resources:
          requests:
            cpu: "8"
            memory: 32Gi
            nvidia.com/gpu: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: good
spec:
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  containers:
  - name: main
    resources:
      requests: {cpu: "4", memory: 8Gi, nvidia.com/gpu: 2}
      limits: {nvidia.com/gpu: 2}
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  jobTemplate:
    spec:
      template:
        spec:
          nodeSelector:
            cloud.google.com/gke-accelerator: nvidia-tesla-a100
          tolerations:
          - operator: Exists
          containers:
          - name: eval
            resources:
              requests:
                memory: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: cpu-only
spec:
  containers:
  - name: web
)";

TEST(LintTest, FindsEachRuleWithPathAndLine) {
  auto f = LintManifest(kManifest, "deploy.yaml");
  ASSERT_TRUE(f.has_value()) << f.error().ToString();
  ASSERT_EQ(f->size(), 4u);
  EXPECT_EQ(FormatFinding((*f)[0]),
            "deploy.yaml:9:9: init-container-without-requests: init container 'fetch' on a GPU "
            "node has no cpu and memory request, so the scheduler cannot reserve room for it "
            "beside the GPU work (Deployment/trainer, "
            "spec.template.spec.initContainers[0].resources.requests)");
  EXPECT_EQ((*f)[1].rule, "gpu-request-without-limit");
  EXPECT_EQ((*f)[1].line, 18);
  EXPECT_EQ((*f)[1].field, "spec.template.spec.containers[0].resources.limits");
  EXPECT_EQ((*f)[2].rule, "missing-gpu-toleration");
  EXPECT_EQ((*f)[2].object, "Deployment/trainer");
  EXPECT_EQ((*f)[3].rule, "container-without-requests");
  EXPECT_EQ((*f)[3].object, "CronJob/nightly");
  EXPECT_EQ((*f)[3].line, 52);  // the requests mapping (its first key)
  EXPECT_EQ((*f)[2].line, 8);   // the pod spec
  EXPECT_NE((*f)[3].message.find("no cpu request"), std::string::npos);
}

TEST(LintTest, UnequalLimitAndSyntaxErrors) {
  auto f = LintManifest(R"(kind: Pod
metadata: {name: p}
spec:
  tolerations: [{key: nvidia.com/gpu}]
  containers:
  - name: c
    resources:
      requests: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 2}
      limits: {nvidia.com/gpu: 1}
)",
                        "p.yaml");
  ASSERT_TRUE(f.has_value());
  ASSERT_EQ(f->size(), 1u);
  EXPECT_NE((*f)[0].message.find("request 2 but limit 1"), std::string::npos);
  auto bad = LintManifest("kind: Pod\nspec: [unclosed\n", "bad.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message().rfind("bad.yaml:", 0), 0u) << bad.error().message();
}

}  // namespace
}  // namespace seedance::audit
