// `seedance server` started the way deploy/ ships it: the rendered ConfigMap's config file and
// exactly the rendered StatefulSet's args, with the Secrets deploy/README.md tells the operator to
// create (split from deploy_test.go, which renders and lints; the package comment is there).
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
)

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
