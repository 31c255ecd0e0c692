package cluster

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// The parity profile: every node filtered and scored, no score plugin but the extender's, and
// the extender asked about every pod (no managedResources).
func TestSchedulerConfigYAMLExtenderScoreOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sched.yaml")
	y := SchedulerConfigYAML(SchedulerOptions{Name: "seedance", ExtenderURL: "http://127.0.0.1:9/extender", NodeCache: true,
		Bind: true, PercentageOfNodesToScore: 100, ExtenderScoreOnly: true, ExtenderAllPods: true}, "/k/kubeconfig")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatalf("kube-scheduler rejects the config: %v\n%s", err, y)
	}
	if cfg.PercentageOfNodesToScore == nil || *cfg.PercentageOfNodesToScore != 100 {
		t.Fatalf("percentageOfNodesToScore = %v, want 100\n%s", cfg.PercentageOfNodesToScore, y)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].Plugins == nil {
		t.Fatalf("profiles = %+v", cfg.Profiles)
	}
	d := cfg.Profiles[0].Plugins.Score.Disabled
	if len(d) != 1 || d[0].Name != "*" {
		t.Fatalf("score plugins disabled = %+v, want [*]\n%s", d, y)
	}
	if len(cfg.Extenders) != 1 || cfg.Extenders[0].Weight != 5 || len(cfg.Extenders[0].ManagedResources) != 0 {
		t.Fatalf("extenders = %+v", cfg.Extenders)
	}
}
