package cluster

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// The rendered config must be accepted by kube-scheduler's own loader (defaulting and validation)
// and say what the harness meant.
func TestSchedulerConfigYAMLLoads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sched.yaml")
	y := SchedulerConfigYAML(SchedulerOptions{Name: "seedance", ExtenderURL: "http://127.0.0.1:9/extender", NodeCache: true, Bind: true}, "/k/kubeconfig")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatalf("kube-scheduler rejects the config: %v\n%s", err, y)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != "seedance" {
		t.Fatalf("profiles = %+v, want one named seedance", cfg.Profiles)
	}
	if len(cfg.Extenders) != 1 {
		t.Fatalf("extenders = %+v, want one", cfg.Extenders)
	}
	e := cfg.Extenders[0]
	if e.URLPrefix != "http://127.0.0.1:9/extender" || !e.NodeCacheCapable || e.BindVerb != "bind" || e.FilterVerb != "filter" ||
		e.PrioritizeVerb != "prioritize" || e.Ignorable || e.HTTPTimeout.Duration != 5*time.Second {
		t.Fatalf("extender = %+v", e)
	}
	if len(e.ManagedResources) != 1 || e.ManagedResources[0].Name != "nvidia.com/gpu" {
		t.Fatalf("managedResources = %+v", e.ManagedResources)
	}
	if cfg.ClientConnection.Kubeconfig != "/k/kubeconfig" || cfg.LeaderElection.LeaderElect {
		t.Fatalf("clientConnection %+v leaderElect %v", cfg.ClientConnection, cfg.LeaderElection.LeaderElect)
	}

	plain := SchedulerConfigYAML(SchedulerOptions{}, "/k/kubeconfig")
	if err := os.WriteFile(path, []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatalf("kube-scheduler rejects the plain config: %v\n%s", err, plain)
	}
	if len(cfg.Extenders) != 0 || cfg.Profiles[0].SchedulerName != "default-scheduler" {
		t.Fatalf("plain config: extenders %+v profiles %+v", cfg.Extenders, cfg.Profiles)
	}
}
