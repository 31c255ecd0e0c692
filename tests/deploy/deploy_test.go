// deploy/ checked against the binary it installs (ctest label `deploy`):
//   - deploy/ and deploy/second-scheduler/ render with kustomize's own library (what `kubectl
//     kustomize` runs), hold the objects and RBAC rules deploy/README.md promises, and pass
//     `seedance lint`;
//   - `seedance server` starts with the rendered ConfigMap's config file and exactly the rendered
//     Deployment's args (mount paths mapped into a temp dir, the listen address onto loopback), answers
//     the Deployment's probes the way the kubelet sends them, takes writes with the token only,
//     answers the extender's verbs only to a client certificate from the CA in seedance-tls (made
//     by the shipped recipe, scripts/seedance-certs.sh), and exits 0 on SIGTERM;
//   - the extender URLs of both kube-scheduler configs point at the rendered Service, with the
//     client certificate the server requires mounted where tlsConfig names it;
//   - the NetworkPolicy admits the second scheduler's pods, and deploy/cert-manager/ issues the
//     Secrets the pods mount;
//   - `kubectl kustomize` (when kubectl is on PATH) renders every kustomization to the same objects
//     as the library, and the image's user (Containerfile) is the StatefulSet's non-root runAsUser
//     (shipped_as_documented_test.go).
//
// Environment: SEEDANCE (the seedance binary), DEPLOY_DIR (the repository's deploy/).
package deploy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// The parts of the Kubernetes objects the checks read (field names as in the API).
type meta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type object struct {
	Kind     string            `json:"kind"`
	Metadata meta              `json:"metadata"`
	Data     map[string]string `json:"data"`
	Rules    []rule            `json:"rules"`
	RoleRef  struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"roleRef"`
	Subjects []struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"subjects"`
	Spec json.RawMessage `json:"spec"`
}

type rule struct {
	APIGroups     []string `json:"apiGroups"`
	Resources     []string `json:"resources"`
	ResourceNames []string `json:"resourceNames"`
	Verbs         []string `json:"verbs"`
}

type probe struct {
	HTTPGet *struct {
		Path   string `json:"path"`
		Port   any    `json:"port"`
		Scheme string `json:"scheme"`
	} `json:"httpGet"`
}

type container struct {
	Name    string   `json:"name"`
	Image   string   `json:"image"`
	Command []string `json:"command"`
	Args    []string `json:"args"`
	Env     []struct {
		Name      string `json:"name"`
		Value     string `json:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `json:"fieldPath"`
			} `json:"fieldRef"`
			SecretKeyRef *struct {
				Name     string `json:"name"`
				Key      string `json:"key"`
				Optional *bool  `json:"optional"`
			} `json:"secretKeyRef"`
		} `json:"valueFrom"`
	} `json:"env"`
	Ports []struct {
		Name          string `json:"name"`
		ContainerPort int    `json:"containerPort"`
	} `json:"ports"`
	LivenessProbe   *probe `json:"livenessProbe"`
	ReadinessProbe  *probe `json:"readinessProbe"`
	SecurityContext *struct {
		ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
		Capabilities             *struct {
			Drop []string `json:"drop"`
		} `json:"capabilities"`
	} `json:"securityContext"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
		ReadOnly  bool   `json:"readOnly"`
	} `json:"volumeMounts"`
}

type volume struct {
	Name      string `json:"name"`
	ConfigMap *struct {
		Name string `json:"name"`
	} `json:"configMap"`
	Secret *struct {
		SecretName string `json:"secretName"`
		Items      []struct {
			Key  string `json:"key"`
			Path string `json:"path"`
		} `json:"items"`
	} `json:"secret"`
	PersistentVolumeClaim *struct {
		ClaimName string `json:"claimName"`
	} `json:"persistentVolumeClaim"`
	EmptyDir *struct{} `json:"emptyDir"`
}

type deploymentSpec struct {
	Replicas             int `json:"replicas"`
	VolumeClaimTemplates []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	} `json:"volumeClaimTemplates"` // StatefulSet

	Template struct {
		Spec struct {
			ServiceAccountName string `json:"serviceAccountName"`
			SecurityContext    *struct {
				RunAsNonRoot *bool  `json:"runAsNonRoot"`
				RunAsUser    *int64 `json:"runAsUser"`
			} `json:"securityContext"`
			Containers []container `json:"containers"`
			Volumes    []volume    `json:"volumes"`
		} `json:"spec"`
	} `json:"template"`
}

type serviceSpec struct {
	PublishNotReadyAddresses bool `json:"publishNotReadyAddresses"`
	Ports                    []struct {
		Name string `json:"name"`
		Port int    `json:"port"`
	} `json:"ports"`
}

// rendered is one kustomization's output: the YAML as `kubectl kustomize` prints it and its objects.
type rendered struct {
	yaml    []byte
	objects []object
}

func (r rendered) find(kind, name string) (object, bool) {
	for _, o := range r.objects {
		if o.Kind == kind && o.Metadata.Name == name {
			return o, true
		}
	}
	return object{}, false
}

func (r rendered) mustFind(t *testing.T, kind, name string) object {
	t.Helper()
	o, ok := r.find(kind, name)
	if !ok {
		t.Fatalf("the render has no %s/%s", kind, name)
	}
	return o
}

// mustFindGenerated finds a generated object (kustomize appends a content hash to generated names).
func (r rendered) mustFindGenerated(t *testing.T, kind, prefix string) object {
	t.Helper()
	for _, o := range r.objects {
		if o.Kind == kind && strings.HasPrefix(o.Metadata.Name, prefix+"-") {
			return o
		}
	}
	t.Fatalf("the render has no %s/%s-<hash>", kind, prefix)
	return object{}
}

func deployDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("DEPLOY_DIR")
	if d == "" {
		t.Fatal("DEPLOY_DIR is not set (the repository's deploy/ folder)")
	}
	return d
}

func seedanceBin(t *testing.T) string {
	t.Helper()
	b := os.Getenv("SEEDANCE")
	if b == "" {
		t.Fatal("SEEDANCE is not set (the seedance binary)")
	}
	return b
}

func render(t *testing.T, dir string) rendered {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		t.Fatalf("kustomize %s: %v", dir, err)
	}
	r := rendered{yaml: out}
	for _, res := range m.Resources() {
		j, err := res.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", res.CurId(), err)
		}
		var o object
		if err := json.Unmarshal(j, &o); err != nil {
			t.Fatalf("%s: %v", res.CurId(), err)
		}
		r.objects = append(r.objects, o)
	}
	return r
}

// deployment reads a Deployment's or StatefulSet's spec (kind: "Deployment" or "StatefulSet").
func deployment(t *testing.T, r rendered, kind, name string) deploymentSpec {
	t.Helper()
	var d deploymentSpec
	if err := json.Unmarshal(r.mustFind(t, kind, name).Spec, &d); err != nil {
		t.Fatalf("%s/%s: %v", kind, name, err)
	}
	return d
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// grants reports whether some rule of `rules` allows `verb` on group/resource (and name, if set).
func grants(rules []rule, group, resource, verb, name string) bool {
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) &&
			(len(r.ResourceNames) == 0 || has(r.ResourceNames, name)) {
			return true
		}
	}
	return false
}

// lint runs `seedance lint` on a file; returns its exit code and output.
func lint(t *testing.T, file string) (int, string) {
	t.Helper()
	out, err := exec.Command(seedanceBin(t), "lint", file).CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("seedance lint: %v", err)
	}
	return code, string(out)
}

func TestServerKustomizationRendersAndLints(t *testing.T) {
	r := render(t, deployDir(t))
	const ns = "seedance-system"
	r.mustFind(t, "Namespace", ns)
	for _, o := range r.objects {
		if o.Kind != "Namespace" && !strings.HasPrefix(o.Kind, "Cluster") && o.Metadata.Namespace != ns {
			t.Errorf("%s/%s is in namespace %q, not %s", o.Kind, o.Metadata.Name, o.Metadata.Namespace, ns)
		}
	}
	r.mustFind(t, "ServiceAccount", "seedance")

	// RBAC: read nodes and pods everywhere, bind pods, hold a Lease in its namespace.
	cr := r.mustFind(t, "ClusterRole", "seedance")
	for _, res := range []string{"nodes", "pods"} {
		for _, verb := range []string{"get", "list", "watch"} {
			if !grants(cr.Rules, "", res, verb, "") {
				t.Errorf("ClusterRole seedance does not grant %s %s", verb, res)
			}
		}
	}
	if !grants(cr.Rules, "", "pods/binding", "create", "") {
		t.Error("ClusterRole seedance does not grant create pods/binding")
	}
	crb := r.mustFind(t, "ClusterRoleBinding", "seedance")
	if crb.RoleRef.Name != "seedance" || len(crb.Subjects) != 1 || crb.Subjects[0].Name != "seedance" ||
		crb.Subjects[0].Namespace != ns {
		t.Errorf("ClusterRoleBinding seedance does not bind ClusterRole seedance to ServiceAccount %s/seedance", ns)
	}
	role := r.mustFind(t, "Role", "seedance-leases")
	for _, verb := range []string{"get", "create", "update"} {
		if !grants(role.Rules, "coordination.k8s.io", "leases", verb, "") {
			t.Errorf("Role seedance-leases does not grant %s leases", verb)
		}
	}
	rb := r.mustFind(t, "RoleBinding", "seedance-leases")
	if rb.RoleRef.Name != "seedance-leases" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "seedance" {
		t.Error("RoleBinding seedance-leases does not bind Role seedance-leases to ServiceAccount seedance")
	}

	// The StatefulSet: non-root, read-only root filesystem, probes on /healthz and /readyz.
	d := deployment(t, r, "StatefulSet", "seedance")
	pod := d.Template.Spec
	if pod.ServiceAccountName != "seedance" {
		t.Errorf("serviceAccountName %q, want seedance", pod.ServiceAccountName)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil ||
		*sc.RunAsUser == 0 {
		t.Error("the pod must set runAsNonRoot: true and a non-zero runAsUser")
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil ||
		!has(sc.Capabilities.Drop, "ALL") {
		t.Error("the container must set readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, drop ALL")
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Error("livenessProbe must be httpGet /healthz")
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Error("readinessProbe must be httpGet /readyz")
	}
	// The ledger lives on a writable volume (the root filesystem is read-only).
	writable := map[string]bool{}
	for _, v := range pod.Volumes {
		writable[v.Name] = v.PersistentVolumeClaim != nil || v.EmptyDir != nil
	}
	for _, v := range d.VolumeClaimTemplates {
		writable[v.Metadata.Name] = true
	}
	db := flagValue(c.Args, "--db")
	ok := false
	for _, m := range c.VolumeMounts {
		if strings.HasPrefix(db, m.MountPath+"/") && writable[m.Name] && !m.ReadOnly {
			ok = true
		}
	}
	if !ok {
		t.Errorf("--db=%s is not on a writable PVC or emptyDir mount", db)
	}
	// Two replicas with leader election, each with its own ledger volume (a claim template) and its
	// pod name as identity.
	if d.Replicas != 2 || !has(c.Args, "--leader-elect") {
		t.Errorf("replicas %d, --leader-elect %v: want 2 replicas electing a leader", d.Replicas, has(c.Args, "--leader-elect"))
	}
	if len(d.VolumeClaimTemplates) != 1 {
		t.Errorf("%d volumeClaimTemplates, want 1 (each replica's ledger)", len(d.VolumeClaimTemplates))
	}
	fields := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			fields[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if fields["POD_NAME"] != "metadata.name" || fields["POD_NAMESPACE"] != "metadata.namespace" {
		t.Errorf("env POD_NAME / POD_NAMESPACE must come from metadata.name / metadata.namespace, got %v", fields)
	}
	// Two replicas share one admission log: its PostgreSQL URL comes from a Secret (required, not
	// optional), which deploy/README.md tells the operator to create; `seedance server` reads the
	// variable as --admission-db.
	shared := false
	for _, e := range c.Env {
		if e.Name == "SEEDANCE_ADMISSION_DB" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			ref := e.ValueFrom.SecretKeyRef
			shared = ref.Name == "seedance-admission-db" && ref.Key == "url" && (ref.Optional == nil || !*ref.Optional)
		}
	}
	if !shared {
		t.Error("env SEEDANCE_ADMISSION_DB must come from Secret seedance-admission-db, key url (not optional): " +
			"two replicas need one PostgreSQL admission log")
	}
	readme, err := os.ReadFile(filepath.Join(deployDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "create secret generic seedance-admission-db") {
		t.Error("deploy/README.md does not say how to create Secret seedance-admission-db")
	}
	help, _ := exec.Command(seedanceBin(t), "server", "--help").CombinedOutput()
	if !strings.Contains(string(help), "--admission-db") || !strings.Contains(string(help), "SEEDANCE_ADMISSION_DB") {
		t.Errorf("`seedance server --help` does not list --admission-db (env SEEDANCE_ADMISSION_DB):\n%s", help)
	}
	// Issue 40: no Service may route to a replica that is not ready (a follower, one still
	// syncing): neither the Service nor the headless one publishes not-ready addresses.
	for _, name := range []string{"seedance", "seedance-pods"} {
		var spec serviceSpec
		if err := json.Unmarshal(r.mustFind(t, "Service", name).Spec, &spec); err != nil {
			t.Fatalf("Service %s: %v", name, err)
		}
		if spec.PublishNotReadyAddresses {
			t.Errorf("Service %s publishes not-ready addresses: a follower would be reached", name)
		}
	}
	r.mustFindGenerated(t, "ConfigMap", "seedance-config")

	// seedance lint passes the rendered manifests ...
	file := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(file, r.yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := lint(t, file); code != 0 {
		t.Errorf("seedance lint on the render: exit %d\n%s", code, out)
	}
	// ... and reads them: the same render with a GPU container lacking requests is flagged.
	gpu := append(append([]byte{}, r.yaml...), []byte(`---
apiVersion: apps/v1
kind: Deployment
metadata: {name: gpu-probe, namespace: seedance-system}
spec:
  selector: {matchLabels: {app: gpu-probe}}
  template:
    metadata: {labels: {app: gpu-probe}}
    spec:
      containers:
      - name: c
        image: seedance
        resources: {limits: {nvidia.com/gpu: 1}}
`)...)
	if err := os.WriteFile(file, gpu, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := lint(t, file); code != 1 || !strings.Contains(out, "container-without-requests") {
		t.Errorf("seedance lint should flag the added GPU container (exit 1), got exit %d\n%s", code, out)
	}
}

func TestSecondSchedulerRendersAndLints(t *testing.T) {
	r := render(t, filepath.Join(deployDir(t), "second-scheduler"))
	// It carries the server too.
	r.mustFind(t, "StatefulSet", "seedance")
	r.mustFind(t, "Service", "seedance")

	d := deployment(t, r, "Deployment", "seedance-scheduler")
	pod := d.Template.Spec
	if pod.ServiceAccountName != "seedance-scheduler" {
		t.Errorf("serviceAccountName %q, want seedance-scheduler", pod.ServiceAccountName)
	}
	if len(pod.Containers) != 1 || !strings.HasPrefix(pod.Containers[0].Image, "registry.k8s.io/kube-scheduler:v") {
		t.Fatalf("want one kube-scheduler container with a versioned image, got %+v", pod.Containers)
	}
	c := pod.Containers[0]
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("the scheduler pod must run as non-root")
	}
	if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the scheduler container must have a read-only root filesystem")
	}

	// RBAC: the built-in scheduler roles, the authentication reader, its own Lease.
	bound := map[string]bool{}
	for _, o := range r.objects {
		if (o.Kind == "ClusterRoleBinding" || o.Kind == "RoleBinding") && len(o.Subjects) == 1 &&
			o.Subjects[0].Name == "seedance-scheduler" {
			bound[o.RoleRef.Kind+"/"+o.RoleRef.Name] = true
		}
	}
	for _, want := range []string{"ClusterRole/system:kube-scheduler", "ClusterRole/system:volume-scheduler",
		"Role/extension-apiserver-authentication-reader", "Role/seedance-scheduler-lease"} {
		if !bound[want] {
			t.Errorf("ServiceAccount seedance-scheduler is not bound to %s", want)
		}
	}

	// The scheduler's config: profile `seedance`, leader election on a Lease its Role covers, and
	// the file the container's --config names is the ConfigMap's key, mounted where --config says.
	cm := r.mustFindGenerated(t, "ConfigMap", "seedance-scheduler-config")
	var cfg struct {
		LeaderElection struct {
			LeaderElect       bool   `json:"leaderElect"`
			ResourceNamespace string `json:"resourceNamespace"`
			ResourceName      string `json:"resourceName"`
		} `json:"leaderElection"`
		Profiles []struct {
			SchedulerName string `json:"schedulerName"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["kube-scheduler-config.yaml"]), &cfg); err != nil {
		t.Fatalf("ConfigMap %s: %v", cm.Metadata.Name, err)
	}
	if len(cfg.Profiles) != 1 || cfg.Profiles[0].SchedulerName != "seedance" {
		t.Errorf("profiles %+v, want one with schedulerName seedance", cfg.Profiles)
	}
	lease := r.mustFind(t, "Role", "seedance-scheduler-lease")
	if !cfg.LeaderElection.LeaderElect || cfg.LeaderElection.ResourceNamespace != lease.Metadata.Namespace ||
		!grants(lease.Rules, "coordination.k8s.io", "leases", "update", cfg.LeaderElection.ResourceName) {
		t.Errorf("leader election %+v is not on a Lease that Role seedance-scheduler-lease lets it update",
			cfg.LeaderElection)
	}
	config := flagValue(c.Command, "--config")
	mounted := false
	for _, m := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == cm.Metadata.Name &&
				config == m.MountPath+"/kube-scheduler-config.yaml" {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("--config=%s is not the ConfigMap %s mounted in the container", config, cm.Metadata.Name)
	}
	checkExtender(t, r, "second-scheduler", cm.Data["kube-scheduler-config.yaml"], false)
	// tlsConfig's files are keys of the Secrets mounted in the scheduler's container.
	for _, f := range tlsFiles(t, cm.Data["kube-scheduler-config.yaml"]) {
		found := false
		for _, m := range c.VolumeMounts {
			for _, v := range pod.Volumes {
				if v.Name != m.Name || v.Secret == nil {
					continue
				}
				for _, it := range v.Secret.Items {
					found = found || f == m.MountPath+"/"+it.Path
				}
			}
		}
		if !found {
			t.Errorf("tlsConfig file %s is not a key of a Secret mounted in the scheduler's container", f)
		}
	}

	file := filepath.Join(t.TempDir(), "rendered.yaml")
	if err := os.WriteFile(file, r.yaml, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := lint(t, file); code != 0 {
		t.Errorf("seedance lint on the render: exit %d\n%s", code, out)
	}
}

// The static kube-scheduler config (node-cache mode, for clusters whose scheduler you configure).
func TestKubeSchedulerConfigPointsAtTheService(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(deployDir(t), "kube-scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	checkExtender(t, render(t, deployDir(t)), "kube-scheduler-config.yaml", string(text), true)
}

// checkExtender: the extenders stanza of a KubeSchedulerConfiguration calls the rendered Service
// over HTTPS in node-cache mode, for nvidia.com/gpu, without bindVerb (the server has no
// --client-ca, so kube-scheduler's bind would be refused without a token).
// managed: the extender names nvidia.com/gpu as its managed resource (the cluster's default
// scheduler: only GPU pods ask Seedance); without it (the second scheduler `seedance`) every pod of
// the profile asks Seedance, GPU-share and CPU-only pods included (docs/KUBERNETES.md).
func checkExtender(t *testing.T, r rendered, where, text string, managed bool) {
	t.Helper()
	var cfg struct {
		Kind      string `json:"kind"`
		Extenders []struct {
			URLPrefix        string `json:"urlPrefix"`
			FilterVerb       string `json:"filterVerb"`
			PrioritizeVerb   string `json:"prioritizeVerb"`
			BindVerb         string `json:"bindVerb"`
			Weight           int    `json:"weight"`
			NodeCacheCapable bool   `json:"nodeCacheCapable"`
			EnableHTTPS      bool   `json:"enableHTTPS"`
			TLSConfig        struct {
				CAFile   string `json:"caFile"`
				CertFile string `json:"certFile"`
				KeyFile  string `json:"keyFile"`
			} `json:"tlsConfig"`
			ManagedResources []struct {
				Name string `json:"name"`
			} `json:"managedResources"`
		} `json:"extenders"`
	}
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if cfg.Kind != "KubeSchedulerConfiguration" || len(cfg.Extenders) != 1 {
		t.Fatalf("%s: want a KubeSchedulerConfiguration with one extender", where)
	}
	e := cfg.Extenders[0]
	svc := r.mustFind(t, "Service", "seedance")
	var spec serviceSpec
	if err := json.Unmarshal(svc.Spec, &spec); err != nil || len(spec.Ports) != 1 {
		t.Fatalf("Service seedance: want one port (%v)", err)
	}
	want := fmt.Sprintf("https://%s.%s.svc:%d/extender", svc.Metadata.Name, svc.Metadata.Namespace, spec.Ports[0].Port)
	if e.URLPrefix != want {
		t.Errorf("%s: urlPrefix %q, want the Service's %q", where, e.URLPrefix, want)
	}
	if e.FilterVerb != "filter" || e.PrioritizeVerb != "prioritize" || e.Weight <= 0 || !e.NodeCacheCapable ||
		!e.EnableHTTPS || e.TLSConfig.CAFile == "" {
		t.Errorf("%s: extender %+v: want filter, prioritize, weight > 0, nodeCacheCapable, HTTPS with a caFile",
			where, e)
	}
	if managed && (len(e.ManagedResources) != 1 || e.ManagedResources[0].Name != "nvidia.com/gpu") {
		t.Errorf("%s: managedResources %+v: want nvidia.com/gpu", where, e.ManagedResources)
	}
	if !managed && len(e.ManagedResources) != 0 {
		t.Errorf("%s: managedResources %+v: want none, or GPU-share and CPU-only pods of the profile bypass Seedance",
			where, e.ManagedResources)
	}
	// The server runs with --client-ca: every verb needs kube-scheduler's client certificate.
	if e.TLSConfig.CertFile == "" || e.TLSConfig.KeyFile == "" {
		t.Errorf("%s: tlsConfig %+v: want certFile and keyFile (the server requires a client certificate)",
			where, e.TLSConfig)
	}
	if e.BindVerb != "" {
		t.Errorf("%s: bindVerb %q: the shipped server config has no server.kube_api_url, so its bind would create no Binding",
			where, e.BindVerb)
	}
}

// flagValue returns X of "--name=X" in args ("" if absent).
func flagValue(args []string, name string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

const testToken = "deploy-test-token-3f9c1e"

// The Secrets deploy/README.md tells the operator to create, made here with test contents.
var secretMakers = map[string]func(t *testing.T, dir string){
	"seedance-tls": writeServingCert,
	"seedance-token": func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte(testToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	},
}

func TestServerStartsWithTheDeploymentsArgs(t *testing.T) {
	r := render(t, deployDir(t))
	set := deployment(t, r, "StatefulSet", "seedance")
	pod := set.Template.Spec
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "server" {
		t.Fatalf("args %v: want `server ...`", c.Args)
	}
	root := t.TempDir()

	// Each mounted volume becomes a folder under root holding what the kubelet would put there.
	volumes := map[string]volume{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v
	}
	for _, v := range set.VolumeClaimTemplates { // each replica's own claim: an empty volume
		volumes[v.Metadata.Name] = volume{Name: v.Metadata.Name, EmptyDir: &struct{}{}}
	}
	mounts := map[string]string{} // mountPath -> folder
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("volumeMount %s names no volume", m.Name)
		}
		dir := filepath.Join(root, strings.TrimPrefix(m.MountPath, "/"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case v.ConfigMap != nil:
			cm := r.mustFind(t, "ConfigMap", v.ConfigMap.Name)
			for key, text := range cm.Data {
				if err := os.WriteFile(filepath.Join(dir, key), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case v.Secret != nil:
			mk, ok := secretMakers[v.Secret.SecretName]
			if !ok {
				t.Fatalf("Secret %s: deploy/README.md does not say how to make it (and this test cannot)",
					v.Secret.SecretName)
			}
			mk(t, dir)
		case v.PersistentVolumeClaim != nil, v.EmptyDir != nil:
		default:
			t.Fatalf("volume %s: a kind this test does not map", m.Name)
		}
		mounts[m.MountPath] = dir
	}
	mountPaths := make([]string, 0, len(mounts))
	for p := range mounts {
		mountPaths = append(mountPaths, p)
	}
	sort.Slice(mountPaths, func(i, j int) bool { return len(mountPaths[i]) > len(mountPaths[j]) })
	mapPath := func(p string) string {
		for _, m := range mountPaths {
			if rest, ok := strings.CutPrefix(p, m+"/"); ok {
				return filepath.Join(mounts[m], rest)
			}
		}
		return p
	}

	// The args, with paths mapped and the listen address onto loopback with a free port.
	args := make([]string, 0, len(c.Args))
	var listenPort string
	for _, a := range c.Args {
		name, value, isFlag := strings.Cut(a, "=")
		switch {
		case a == "--leader-elect":
			// Leader election needs an API server (in a pod: the service account's); here none
			// runs, so the server starts as a single replica. The flag must be one `seedance server
			// --help` lists; k8s.failover_shipped runs it on a real control plane.
			help, _ := exec.Command(seedanceBin(t), "server", "--help").CombinedOutput()
			if !strings.Contains(string(help), "--leader-elect") {
				t.Errorf("`seedance server --help` does not list --leader-elect:\n%s", help)
			}
			continue
		case !isFlag:
			args = append(args, a)
		case name == "--listen":
			_, port, err := net.SplitHostPort(value)
			if err != nil {
				t.Fatalf("--listen=%s: %v", value, err)
			}
			listenPort = port
			args = append(args, "--listen=127.0.0.1:0")
		case strings.HasPrefix(value, "/"):
			mapped := mapPath(value)
			if mapped == value {
				t.Fatalf("%s: %s is on no mounted volume (the root filesystem is read-only)", a, value)
			}
			args = append(args, name+"="+mapped)
		default:
			args = append(args, a)
		}
	}
	if listenPort == "" {
		t.Fatal("the Deployment's args have no --listen")
	}
	if len(c.Ports) != 1 || fmt.Sprint(c.Ports[0].ContainerPort) != listenPort {
		t.Errorf("containerPort %+v is not --listen's port %s", c.Ports, listenPort)
	}

	cmd := exec.Command(seedanceBin(t), args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			// SEEDANCE_ADMISSION_DB: no PostgreSQL runs here, so the admission log stays in --db
			// (one replica); ctest k8s.admission_failover runs two replicas on a shared one.
			continue
		}
		cmd.Env = append(cmd.Env, e.Name+"="+mapPath(e.Value))
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var log bytes.Buffer
	port := make(chan string, 1)
	go func() {
		listening := regexp.MustCompile(`"event":"listening".*"port":([0-9]+)`)
		s := bufio.NewScanner(stderr)
		s.Buffer(make([]byte, 1<<20), 1<<20)
		for s.Scan() {
			log.WriteString(s.Text() + "\n")
			if m := listening.FindStringSubmatch(s.Text()); m != nil {
				port <- m[1]
			}
		}
		exited <- cmd.Wait()
	}()
	defer cmd.Process.Kill() // a no-op once it has exited
	var p string
	select {
	case p = <-port:
	case err := <-exited:
		t.Fatalf("seedance %s exited before listening: %v\n%s", strings.Join(args, " "), err, log.String())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("seedance %s: no listening line in 60 s\n%s", strings.Join(args, " "), log.String())
	}
	base := "https://127.0.0.1:" + p

	// The kubelet's probes: HTTPS, no client certificate, the serving certificate not verified;
	// success is a status in [200, 400).
	kubelet := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for what, pr := range map[string]*probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			t.Errorf("%s: not httpGet", what)
			continue
		}
		if pr.HTTPGet.Scheme != "HTTPS" {
			t.Errorf("%s: scheme %q, but the args serve HTTPS (--tls-cert)", what, pr.HTTPGet.Scheme)
		}
		if fmt.Sprint(pr.HTTPGet.Port) != c.Ports[0].Name && fmt.Sprint(pr.HTTPGet.Port) != listenPort {
			t.Errorf("%s: port %v is not the server's", what, pr.HTTPGet.Port)
		}
		res, err := kubelet.Get(base + pr.HTTPGet.Path)
		if err != nil {
			t.Errorf("%s GET %s: %v", what, pr.HTTPGet.Path, err)
			continue
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode < 200 || res.StatusCode >= 400 {
			t.Errorf("%s GET %s: %d %s (the kubelet needs 200-399)", what, pr.HTTPGet.Path, res.StatusCode, body)
		}
	}

	// The config in force is the ConfigMap's file.
	res, err := kubelet.Get(base + "/v1/config")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Source string `json:"source"`
	}
	if err := json.NewDecoder(res.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if want := mapPath(flagValue(c.Args, "--config")); got.Source != want {
		t.Errorf("/v1/config source %q, want the ConfigMap's file %q", got.Source, want)
	}

	// Writes need the token from Secret seedance-token.
	post := func(token string) int {
		req, _ := http.NewRequest("POST", base+"/v1/breaker/reset", strings.NewReader(`{"namespace":"ml"}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := kubelet.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post(""); code != 401 {
		t.Errorf("a write without the token: %d, want 401", code)
	}
	if code := post(testToken); code != 200 {
		t.Errorf("a write with the token: %d, want 200", code)
	}

	// The extender's verbs need kube-scheduler's client certificate (--client-ca): refused without
	// one, the handshake fails with one from another CA, answered with the recipe's scheduler.crt.
	if flagValue(c.Args, "--client-ca") == "" {
		t.Error("the args have no --client-ca: the extender's verbs would be open to any pod")
	}
	filter := `{"Pod":{"metadata":{"name":"p","namespace":"default","uid":"u1"},"spec":{"containers":[]}},"NodeNames":[]}`
	roots := x509.NewCertPool()
	if ca, err := os.ReadFile(filepath.Join(servingCerts, "ca.crt")); err != nil || !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("ca.crt of seedance-tls: %v", err)
	}
	verb := func(certDir string) (int, error) {
		cfg := &tls.Config{RootCAs: roots}
		if certDir != "" {
			pair, err := tls.LoadX509KeyPair(filepath.Join(certDir, "scheduler.crt"), filepath.Join(certDir, "scheduler.key"))
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		scheduler := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		res, err := scheduler.Post(base+"/extender/filter", "application/json", strings.NewReader(filter))
		if err != nil {
			return 0, err
		}
		res.Body.Close()
		return res.StatusCode, nil
	}
	if code, err := verb(""); err != nil || code != 401 {
		t.Errorf("filter without a client certificate: %d %v, want 401", code, err)
	}
	if code, err := verb(recipeCerts(t)); err == nil {
		t.Errorf("filter with a client certificate from another CA: answered %d, want a failed handshake", code)
	}
	if code, err := verb(servingCerts); err != nil || code != 200 {
		t.Errorf("filter with the recipe's scheduler certificate: %d %v, want 200", code, err)
	}

	// terminationGracePeriodSeconds: SIGTERM stops it with exit 0.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, log.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("still running 30 s after SIGTERM")
	}
	if t.Failed() {
		t.Logf("seedance %s\n%s", strings.Join(args, " "), log.String())
	}
}
