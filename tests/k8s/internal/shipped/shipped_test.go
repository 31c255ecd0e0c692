package shipped

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
)

// The repository's deploy/ (this package is tests/k8s/internal/shipped).
const deployDir = "../../../../deploy"

// SchedulerConfigFile runs deploy/kube-scheduler-config.yaml as shipped: the extender's
// ignorable, managedResources, verbs, weight and timeouts are the file's, only the mapped fields
// change, and kube-scheduler's own loader accepts the result.
func TestSchedulerConfigFileKeepsTheShippedExtender(t *testing.T) {
	file := filepath.Join(deployDir, "kube-scheduler-config.yaml")
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The file's values as JSON numbers and strings, as the output's are.
	j, err := utilyaml.ToJSON(text)
	if err != nil {
		t.Fatal(err)
	}
	var shipped map[string]any
	if err := json.Unmarshal(j, &shipped); err != nil {
		t.Fatal(err)
	}
	certs := t.TempDir()
	for _, f := range []string{"ca.crt", "scheduler.crt", "scheduler.key"} {
		if err := os.WriteFile(filepath.Join(certs, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := &Deploy{Path: "test"}
	out, err := d.SchedulerConfigFile(file, certs, "/k/scheduler.conf", "https://127.0.0.1:9443", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := shipped["extenders"].([]any)[0].(map[string]any)
	ext := got["extenders"].([]any)[0].(map[string]any)
	for k, v := range want {
		switch k {
		case "urlPrefix":
			if ext[k] != "https://127.0.0.1:9443/extender" {
				t.Errorf("urlPrefix %v, want the shipped path on 127.0.0.1:9443", ext[k])
			}
		case "tlsConfig":
			tc := ext[k].(map[string]any)
			for f, name := range map[string]string{"caFile": "ca.crt", "certFile": "scheduler.crt", "keyFile": "scheduler.key"} {
				if tc[f] != filepath.Join(certs, name) {
					t.Errorf("tlsConfig.%s %v, want the recipe's %s", f, tc[f], name)
				}
			}
		default:
			if !reflect.DeepEqual(ext[k], v) {
				t.Errorf("extender %s = %v, the shipped file says %v", k, ext[k], v)
			}
		}
	}
	if len(ext) != len(want) {
		t.Errorf("extender has %d fields, the shipped file %d", len(ext), len(want))
	}
	path := filepath.Join(t.TempDir(), "sched.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(klog.Background(), path)
	if err != nil {
		t.Fatalf("kube-scheduler refuses the config: %v\n%s", err, out)
	}
	e := cfg.Extenders[0]
	if !e.Ignorable || len(e.ManagedResources) != 1 || e.ManagedResources[0].Name != "nvidia.com/gpu" || e.BindVerb != "" ||
		cfg.ClientConnection.Kubeconfig != "/k/scheduler.conf" || cfg.LeaderElection.LeaderElect {
		t.Errorf("kube-scheduler reads: extender %+v, kubeconfig %q, leaderElect %v", e, cfg.ClientConnection.Kubeconfig,
			cfg.LeaderElection.LeaderElect)
	}
	if len(d.Changes) == 0 {
		t.Error("the changes made are not noted")
	}
}

// DropVerb removes one verb on one resource and keeps the rest of the rule.
func TestDropVerbSplitsTheRule(t *testing.T) {
	role := &rbacv1.ClusterRole{Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}},
	}}
	role.Name = "seedance"
	d := &Deploy{Path: "test", Objects: []runtime.Object{role}}
	if err := d.DropVerb("ClusterRole/seedance:nodes:list"); err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/binding"}, Verbs: []string{"create"}},
	}
	if !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("rules %+v, want %+v", role.Rules, want)
	}
	for _, bad := range []string{"ClusterRole/seedance:nodes:delete", "ClusterRole/other:nodes:list", "Secret/x:y:z", "nodes:list"} {
		if err := d.DropVerb(bad); err == nil || !strings.Contains(err.Error(), "--drop-verb") {
			t.Errorf("DropVerb(%q) = %v, want an error naming --drop-verb", bad, err)
		}
	}
}
