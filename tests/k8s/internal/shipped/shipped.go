// Package shipped runs deploy/ as kustomize renders it (tests/deploy/cmd/render) on the harness's
// control plane, for the scenarios that test the configuration a cluster gets (issue 40):
//
//   - applied to the API server as rendered: the Namespace, the ServiceAccounts, ClusterRoles,
//     ClusterRoleBindings, Roles and RoleBindings (RBAC is enforced: cluster.Start),
//     the ConfigMaps and the NetworkPolicy (accepted by the API server; nothing enforces it here,
//     no CNI runs);
//   - run as processes instead of being applied (no kubelet runs here): the StatefulSet
//     `seedance`'s container, as `seedance` with the rendered args and env, its volumes as
//     folders (ConfigMaps from the render, Secrets from the shipped openssl recipe
//     scripts/seedance-certs.sh), its API credentials a kubeconfig with the token of its
//     ServiceAccount (TokenRequest) in place of the in-cluster files; and the Deployment
//     `seedance-scheduler`'s KubeSchedulerConfiguration (the rendered ConfigMap), run in-process
//     with its ServiceAccount's token, the Secret paths it mounts mapped to the recipe's files;
//   - a KubeSchedulerConfiguration file deploy/ ships for a kube-scheduler the operator runs
//     (deploy/kube-scheduler-config.yaml: SchedulerConfigFile), run as that kube-scheduler would
//     run it, as user system:kube-scheduler, its tlsConfig files the recipe's;
//   - not used: the Services (the harness calls the leader's address, or a proxy in its place),
//     the PVC template (a folder), and the env from Secret seedance-admission-db unless the
//     scenario has a PostgreSQL (AdmissionDB; without it the admission log stays in --db, as
//     with one replica).
//
// What each scenario changes beyond that is returned in Changes, and printed.
package shipped

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Deploy is one rendered kustomization.
type Deploy struct {
	Path    string
	Objects []runtime.Object
	// Changes lists, in words, what the harness does differently from a cluster (filled as the
	// methods run).
	Changes []string
	// AdmissionDB is the postgresql:// URL that Secret seedance-admission-db's key `url` holds;
	// empty: no PostgreSQL, SEEDANCE_ADMISSION_DB is left unset.
	AdmissionDB string
	// token is Secret seedance-token's value, one for every replica.
	token string
}

// controlPlaneCIDR is the placeholder deploy/kustomization.yaml's NetworkPolicy patch carries
// until the operator writes the control-plane nodes' addresses (the API server refuses it).
const controlPlaneCIDR = "CONTROL-PLANE-CIDR"

// DropVerb removes VERB on RESOURCE from the rules of the rendered Role or ClusterRole named by
// spec, "KIND/NAME:RESOURCE:VERB" (for example ClusterRole/seedance:nodes:list): the negative
// test that a scenario fails when deploy/'s RBAC lacks what the server needs.
func (d *Deploy) DropVerb(spec string) error {
	obj, rest, _ := strings.Cut(spec, ":")
	resource, verb, ok := strings.Cut(rest, ":")
	kind, name, _ := strings.Cut(obj, "/")
	if !ok || name == "" || resource == "" || verb == "" || (kind != "Role" && kind != "ClusterRole") {
		return fmt.Errorf("--drop-verb %q: want Role/NAME:RESOURCE:VERB or ClusterRole/NAME:RESOURCE:VERB", spec)
	}
	o := d.find(kind, named(name))
	if o == nil {
		return fmt.Errorf("--drop-verb %q: no %s %s in %s", spec, kind, name, d.Path)
	}
	var rules *[]rbacv1.PolicyRule
	switch r := o.(type) {
	case *rbacv1.ClusterRole:
		rules = &r.Rules
	case *rbacv1.Role:
		rules = &r.Rules
	}
	var out []rbacv1.PolicyRule
	dropped := false
	for _, r := range *rules {
		if !has(r.Resources, resource) || !has(r.Verbs, verb) {
			out = append(out, r)
			continue
		}
		// The rule splits: the other resources keep every verb, RESOURCE keeps the others.
		if others := without(r.Resources, resource); len(others) > 0 {
			o := *r.DeepCopy()
			o.Resources = others
			out = append(out, o)
		}
		if verbs := without(r.Verbs, verb); len(verbs) > 0 {
			o := *r.DeepCopy()
			o.Resources, o.Verbs = []string{resource}, verbs
			out = append(out, o)
		}
		dropped = true
	}
	if !dropped {
		return fmt.Errorf("--drop-verb %q: %s %s grants no %s on %s", spec, kind, name, verb, resource)
	}
	*rules = out
	d.note("RBAC broken on purpose: %s %s without %s on %s", kind, name, verb, resource)
	return nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// Load reads `kubectl kustomize` output (multi-document YAML).
func Load(path string) (*Deploy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	d := &Deploy{Path: path}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for i := 1; ; i++ {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(raw.Raw) == "null" {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw.Raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		d.Objects = append(d.Objects, obj)
	}
	return d, nil
}

func (d *Deploy) note(format string, a ...any) {
	n := fmt.Sprintf(format, a...)
	for _, c := range d.Changes {
		if c == n {
			return
		}
	}
	d.Changes = append(d.Changes, n)
}

// Apply creates the identity, RBAC, ConfigMap and NetworkPolicy objects; it returns what it
// applied and what it left to be run as processes.
func (d *Deploy) Apply(ctx context.Context, c kubernetes.Interface) (applied, notApplied []string, err error) {
	create := func(kind, ns, name string, f func() error) error {
		if err := f(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("apply %s %s/%s: %w", kind, ns, name, err)
		}
		applied = append(applied, kind+"/"+name)
		return nil
	}
	opts := metav1.CreateOptions{}
	for _, obj := range d.Objects {
		var err error
		switch o := obj.(type) {
		case *corev1.Namespace:
			err = create("Namespace", "", o.Name, func() error { _, e := c.CoreV1().Namespaces().Create(ctx, o, opts); return e })
		case *corev1.ServiceAccount:
			err = create("ServiceAccount", o.Namespace, o.Name, func() error {
				_, e := c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, opts)
				return e
			})
		case *rbacv1.ClusterRole:
			err = create("ClusterRole", "", o.Name, func() error { _, e := c.RbacV1().ClusterRoles().Create(ctx, o, opts); return e })
		case *rbacv1.ClusterRoleBinding:
			err = create("ClusterRoleBinding", "", o.Name, func() error {
				_, e := c.RbacV1().ClusterRoleBindings().Create(ctx, o, opts)
				return e
			})
		case *rbacv1.Role:
			err = create("Role", o.Namespace, o.Name, func() error { _, e := c.RbacV1().Roles(o.Namespace).Create(ctx, o, opts); return e })
		case *rbacv1.RoleBinding:
			err = create("RoleBinding", o.Namespace, o.Name, func() error {
				_, e := c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, opts)
				return e
			})
		case *corev1.ConfigMap:
			err = create("ConfigMap", o.Namespace, o.Name, func() error { _, e := c.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, opts); return e })
		case *networkingv1.NetworkPolicy:
			d.fillControlPlaneCIDR(o)
			err = create("NetworkPolicy", o.Namespace, o.Name, func() error {
				_, e := c.NetworkingV1().NetworkPolicies(o.Namespace).Create(ctx, o, opts)
				return e
			})
		default:
			m, _ := metaOf(obj)
			notApplied = append(notApplied, fmt.Sprintf("%T/%s", obj, m))
		}
		if err != nil {
			return applied, notApplied, err
		}
	}
	return applied, notApplied, nil
}

// fillControlPlaneCIDR does the operator's edit deploy/kustomization.yaml asks for: the
// placeholder becomes the control plane's address here (127.0.0.1/32).
func (d *Deploy) fillControlPlaneCIDR(np *networkingv1.NetworkPolicy) {
	for i := range np.Spec.Ingress {
		for j := range np.Spec.Ingress[i].From {
			if b := np.Spec.Ingress[i].From[j].IPBlock; b != nil && b.CIDR == controlPlaneCIDR {
				b.CIDR = "127.0.0.1/32"
				d.note("NetworkPolicy %s: %s set to 127.0.0.1/32 (the operator's edit of deploy/kustomization.yaml)", np.Name, controlPlaneCIDR)
			}
		}
	}
}

func metaOf(obj runtime.Object) (string, bool) {
	if m, ok := obj.(metav1.Object); ok {
		return m.GetName(), true
	}
	return "", false
}

func (d *Deploy) find(kind string, match func(runtime.Object) bool) runtime.Object {
	for _, o := range d.Objects {
		if strings.TrimPrefix(fmt.Sprintf("%T", o), "*v1.") == kind && match(o) {
			return o
		}
	}
	return nil
}

func named(name string) func(runtime.Object) bool {
	return func(o runtime.Object) bool { n, _ := metaOf(o); return n == name }
}

// configMap finds a ConfigMap by name or by kustomize's generated name (NAME-<hash>).
func (d *Deploy) configMap(name string) *corev1.ConfigMap {
	o := d.find("ConfigMap", func(o runtime.Object) bool {
		n, _ := metaOf(o)
		return n == name || strings.HasPrefix(n, name+"-")
	})
	if o == nil {
		return nil
	}
	return o.(*corev1.ConfigMap)
}

// ServerConfig returns the rendered ConfigMap seedance-config's seedance-config.yaml.
func (d *Deploy) ServerConfig() (string, error) {
	cm := d.configMap("seedance-config")
	if cm == nil {
		return "", fmt.Errorf("%s: no ConfigMap seedance-config", d.Path)
	}
	return cm.Data["seedance-config.yaml"], nil
}

// Token asks the API server for a token of ServiceAccount ns/name (TokenRequest, as the kubelet
// does for a projected token) and writes it to path.
func Token(ctx context.Context, c kubernetes.Interface, ns, name, path string) error {
	seconds := int64(24 * 3600)
	tr, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("token of ServiceAccount %s/%s: %w", ns, name, err)
	}
	return os.WriteFile(path, []byte(tr.Status.Token), 0o600)
}

// Kubeconfig writes a kubeconfig for server (CA caPEM) that authenticates with tokenFile.
func Kubeconfig(path, server string, caPEM []byte, tokenFile string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	return clientcmd.WriteToFile(*kc, path)
}

// Identity applies nothing: it makes ServiceAccount ns/name's token and a kubeconfig with it under
// dir, and returns the kubeconfig's path.
func Identity(ctx context.Context, c kubernetes.Interface, server string, caPEM []byte, ns, name, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	token := filepath.Join(dir, name+".token")
	if err := Token(ctx, c, ns, name, token); err != nil {
		return "", err
	}
	kc := filepath.Join(dir, name+".kubeconfig")
	return kc, Kubeconfig(kc, server, caPEM, token)
}

// Certs runs the shipped openssl recipe (scripts/seedance-certs.sh) into dir with 127.0.0.1 among
// the server's names (the harness reaches the server there, not at the Service's name).
func Certs(script, dir string) error {
	out, err := exec.Command("bash", script, dir, "--san", "IP:127.0.0.1", "--days", "2").CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", script, err, out)
	}
	return nil
}

// secretFile maps a key of a Secret deploy/README.md has the operator create to the recipe's file
// (dir: the recipe's output) or the harness's token.
func secretFile(secret, key, certs, token string) (string, bool) {
	switch secret + "/" + key {
	case "seedance-tls/tls.crt", "seedance-tls/tls.key", "seedance-tls/ca.crt":
		return filepath.Join(certs, key), true
	case "seedance-scheduler-client/tls.crt":
		return filepath.Join(certs, "scheduler.crt"), true
	case "seedance-scheduler-client/tls.key":
		return filepath.Join(certs, "scheduler.key"), true
	case "seedance-token/token":
		return token, true
	}
	return "", false
}

// mounts maps a pod's mount paths to folders under dir filled as the kubelet would: ConfigMaps
// from the render, Secrets from the recipe's files, empty folders for the rest.
func (d *Deploy) mounts(pod corev1.PodSpec, c corev1.Container, claims []corev1.PersistentVolumeClaim, dir, certs, token string) (map[string]string, error) {
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	for _, pvc := range claims {
		vols[pvc.Name] = corev1.Volume{Name: pvc.Name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	}
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			return nil, fmt.Errorf("volumeMount %s names no volume", m.Name)
		}
		host := filepath.Join(dir, "volumes", m.Name)
		if err := os.MkdirAll(host, 0o755); err != nil {
			return nil, err
		}
		switch {
		case v.ConfigMap != nil:
			cm := d.configMap(v.ConfigMap.Name)
			if cm == nil {
				return nil, fmt.Errorf("volume %s: no ConfigMap %s in the render", m.Name, v.ConfigMap.Name)
			}
			for k, text := range cm.Data {
				if err := os.WriteFile(filepath.Join(host, k), []byte(text), 0o644); err != nil {
					return nil, err
				}
			}
		case v.Secret != nil:
			keys := []string{}
			for _, it := range v.Secret.Items {
				keys = append(keys, it.Key+"="+it.Path)
			}
			if len(keys) == 0 {
				for _, k := range []string{"tls.crt", "tls.key", "ca.crt", "token"} {
					if _, ok := secretFile(v.Secret.SecretName, k, certs, token); ok {
						keys = append(keys, k+"="+k)
					}
				}
			}
			if len(keys) == 0 {
				return nil, fmt.Errorf("volume %s: Secret %s is not one deploy/README.md makes", m.Name, v.Secret.SecretName)
			}
			for _, kp := range keys {
				key, path, _ := strings.Cut(kp, "=")
				src, ok := secretFile(v.Secret.SecretName, key, certs, token)
				if !ok {
					return nil, fmt.Errorf("volume %s: Secret %s has no key %s in the recipe", m.Name, v.Secret.SecretName, key)
				}
				b, err := os.ReadFile(src)
				if err != nil {
					return nil, err
				}
				if err := os.WriteFile(filepath.Join(host, path), b, 0o600); err != nil {
					return nil, err
				}
			}
		case v.EmptyDir != nil, v.PersistentVolumeClaim != nil:
		default:
			return nil, fmt.Errorf("volume %s: a kind the harness does not map", m.Name)
		}
		out[m.MountPath] = host
	}
	return out, nil
}

func mapPath(mounts map[string]string, p string) (string, bool) {
	best := ""
	for m := range mounts {
		if strings.HasPrefix(p, m+"/") && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return p, false
	}
	return filepath.Join(mounts[best], strings.TrimPrefix(p, best+"/")), true
}

// Server is the StatefulSet seedance's container as a process: its args and environment.
type Server struct {
	Args  []string
	Env   []string
	Token string // the write token (Secret seedance-token)
}

// ServerCommand turns the StatefulSet `seedance`'s container into a command under dir: mount
// paths mapped, --listen onto 127.0.0.1:0, and --kubeconfig (the ServiceAccount's token) added in
// place of the in-cluster credentials. ordinal: the pod's (seedance-ORDINAL).
func (d *Deploy) ServerCommand(dir, certs, kubeconfig string, ordinal int) (*Server, error) {
	o := d.find("StatefulSet", named("seedance"))
	if o == nil {
		return nil, fmt.Errorf("%s: no StatefulSet seedance", d.Path)
	}
	set := o.(*appsv1.StatefulSet)
	if len(set.Spec.Template.Spec.Containers) != 1 {
		return nil, fmt.Errorf("StatefulSet seedance: want one container")
	}
	c := set.Spec.Template.Spec.Containers[0]
	if d.token == "" {
		b := make([]byte, 16)
		rand.Read(b)
		d.token = hex.EncodeToString(b)
	}
	s := &Server{Token: d.token}
	tokenFile := filepath.Join(dir, "write.token")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(tokenFile, []byte(s.Token+"\n"), 0o600); err != nil {
		return nil, err
	}
	mounts, err := d.mounts(set.Spec.Template.Spec, c, set.Spec.VolumeClaimTemplates, dir, certs, tokenFile)
	if err != nil {
		return nil, fmt.Errorf("StatefulSet seedance: %w", err)
	}
	for _, a := range c.Args {
		name, value, isFlag := strings.Cut(a, "=")
		switch {
		case name == "--listen":
			s.Args = append(s.Args, "--listen=127.0.0.1:0")
			d.note("seedance server: --listen=%s run as --listen=127.0.0.1:0", value)
		case isFlag && strings.HasPrefix(value, "/"):
			p, ok := mapPath(mounts, value)
			if !ok {
				return nil, fmt.Errorf("StatefulSet seedance: %s is on no mounted volume", a)
			}
			s.Args = append(s.Args, name+"="+p)
		default:
			s.Args = append(s.Args, a)
		}
	}
	s.Args = append(s.Args, "--kubeconfig="+kubeconfig)
	d.note("seedance server: --kubeconfig with ServiceAccount seedance-system/seedance's token (TokenRequest) in place of the in-cluster token files")
	s.Env = []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			v := map[string]string{"metadata.name": fmt.Sprintf("%s-%d", set.Name, ordinal),
				"metadata.namespace": set.Namespace}[e.ValueFrom.FieldRef.FieldPath]
			s.Env = append(s.Env, e.Name+"="+v)
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && d.AdmissionDB != "" &&
			e.ValueFrom.SecretKeyRef.Name == "seedance-admission-db" && e.ValueFrom.SecretKeyRef.Key == "url":
			s.Env = append(s.Env, e.Name+"="+d.AdmissionDB)
		case e.ValueFrom != nil:
			d.note("seedance server: env %s (from a Secret) not set: no PostgreSQL here, the admission log stays in --db", e.Name)
		default:
			v, _ := mapPath(mounts, e.Value)
			s.Env = append(s.Env, e.Name+"="+v)
		}
	}
	return s, nil
}

// SchedulerConfig returns the Deployment seedance-scheduler's KubeSchedulerConfiguration (the
// rendered ConfigMap it mounts) as JSON, run as adaptScheduler says, its tlsConfig paths mapped to
// the files of the Secrets the Deployment mounts there. edit, if not nil, changes the rest (and
// must say so with Note).
func (d *Deploy) SchedulerConfig(dir, certs, kubeconfig, base string, edit func(cfg map[string]any)) (string, error) {
	o := d.find("Deployment", named("seedance-scheduler"))
	if o == nil {
		return "", fmt.Errorf("%s: no Deployment seedance-scheduler (render deploy/second-scheduler)", d.Path)
	}
	dep := o.(*appsv1.Deployment)
	c := dep.Spec.Template.Spec.Containers[0]
	mounts, err := d.mounts(dep.Spec.Template.Spec, c, nil, filepath.Join(dir, "scheduler"), certs, "")
	if err != nil {
		return "", fmt.Errorf("Deployment seedance-scheduler: %w", err)
	}
	var file string
	for _, a := range c.Command {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			file, _ = mapPath(mounts, v)
		}
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("Deployment seedance-scheduler: --config: %w", err)
	}
	return d.adaptScheduler(file, text, kubeconfig, base, func(p string) (string, bool) { return mapPath(mounts, p) }, edit)
}

// SchedulerConfigFile returns the KubeSchedulerConfiguration file deploy/ ships for a
// kube-scheduler the operator runs (deploy/kube-scheduler-config.yaml, read as it is) as JSON, run
// as adaptScheduler says: clientConnection.kubeconfig is the control plane's scheduler.conf
// (kubeconfig: user system:kube-scheduler), and tlsConfig's files are the recipe's (certs), which
// deploy/README.md (step 4a) has the operator copy to the directory the file names.
func (d *Deploy) SchedulerConfigFile(file, certs, kubeconfig, base string, edit func(cfg map[string]any)) (string, error) {
	text, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	recipe := func(p string) (string, bool) {
		q := filepath.Join(certs, filepath.Base(p))
		_, err := os.Stat(q)
		return q, err == nil
	}
	d.note("kube-scheduler: %s as is, tlsConfig's files from scripts/seedance-certs.sh's output", file)
	return d.adaptScheduler(file, text, kubeconfig, base, recipe, edit)
}

// adaptScheduler maps a KubeSchedulerConfiguration onto the harness: clientConnection.kubeconfig
// (the identity the scheduler runs as; its qps and burst are kept), the extender's urlPrefix host
// and port replaced by base (the Service's DNS name does not resolve here), tlsConfig's paths by
// files (mapping each), and leader election off (one scheduler in this process; kube-scheduler
// exits the process when it stops leading). Everything else is the file's.
func (d *Deploy) adaptScheduler(file string, text []byte, kubeconfig, base string, files func(string) (string, bool),
	edit func(cfg map[string]any)) (string, error) {
	var cfg map[string]any
	if err := utilyaml.Unmarshal(text, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	cc, _ := cfg["clientConnection"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
	}
	cc["kubeconfig"] = kubeconfig
	cfg["clientConnection"] = cc
	d.note("kube-scheduler: clientConnection.kubeconfig %s", filepath.Base(kubeconfig))
	le, _ := cfg["leaderElection"].(map[string]any)
	if le == nil {
		le = map[string]any{} // kube-scheduler's default: leaderElect true
	}
	if v, ok := le["leaderElect"]; !ok || v == true {
		le["leaderElect"] = false
		cfg["leaderElection"] = le
		d.note("kube-scheduler: leaderElection.leaderElect false (one scheduler in the harness's process)")
	}
	exts, _ := cfg["extenders"].([]any)
	if len(exts) != 1 {
		return "", fmt.Errorf("%s: want one extender, got %d", file, len(exts))
	}
	ext := exts[0].(map[string]any)
	u, err := url.Parse(fmt.Sprint(ext["urlPrefix"]))
	if err != nil {
		return "", fmt.Errorf("%s: urlPrefix: %w", file, err)
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	d.note("kube-scheduler: extender urlPrefix %s run as %s://%s%s", u, b.Scheme, b.Host, u.Path)
	u.Host = b.Host
	ext["urlPrefix"] = u.String()
	if tc, ok := ext["tlsConfig"].(map[string]any); ok {
		for _, k := range []string{"caFile", "certFile", "keyFile"} {
			if v, ok := tc[k].(string); ok && v != "" {
				p, ok := files(v)
				if !ok {
					return "", fmt.Errorf("%s: tlsConfig.%s %s: the harness has no file for it", file, k, v)
				}
				tc[k] = p
			}
		}
	}
	if edit != nil {
		edit(cfg)
	}
	j, err := json.MarshalIndent(cfg, "", "  ")
	return string(j), err
}

// Note records a change a scenario makes.
func (d *Deploy) Note(format string, a ...any) { d.note(format, a...) }
