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
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
