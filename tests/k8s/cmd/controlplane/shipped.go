package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/shipped"
)

// asShipped is deploy/ as rendered, running on the control plane (RBAC, the default admission
// plugins: cluster.Start): the RBAC and config objects applied, `seedance server` with the
// StatefulSet's args over mutual TLS under its ServiceAccount, kube-scheduler with the
// Deployment's KubeSchedulerConfiguration under its own (internal/shipped says what is mapped).
type asShipped struct {
	deploy *shipped.Deploy
	env    *shippedEnv
	srv    *seedance.Server
	sched  *cluster.Scheduler
	token  string // the write token (Secret seedance-token)
	// probes401 is how many requests the harness's own anonymous probe had refused (401) before
	// kube-scheduler started.
	probes401 float64
}

// shippedPolicy reads server.placement_policy and server.seed of the rendered ConfigMap.
func shippedPolicy(d *shipped.Deploy) (string, uint64, error) {
	text, err := d.ServerConfig()
	if err != nil {
		return "", 0, err
	}
	var cfg struct {
		Server struct {
			PlacementPolicy string `json:"placement_policy"`
			Seed            uint64 `json:"seed"`
		} `json:"server"`
	}
	if err := utilyaml.Unmarshal([]byte(text), &cfg); err != nil {
		return "", 0, fmt.Errorf("ConfigMap seedance-config: %w", err)
	}
	return cfg.Server.PlacementPolicy, cfg.Server.Seed, nil
}

// shippedFlags are every scenario's: the render of deploy/ it runs (there is no other setup).
type shippedFlags struct {
	rendered, certs, schedulerConfig, dropVerb *string
}

func addShippedFlags(fs *flag.FlagSet) *shippedFlags {
	return &shippedFlags{
		rendered: fs.String("rendered", "", "deploy/ or deploy/second-scheduler as kustomize renders it (required; "+
			"tests/k8s/shipped_test.sh renders it): RBAC, ServiceAccounts, the StatefulSet's args with mutual TLS"),
		certs: fs.String("certs-script", "", "scripts/seedance-certs.sh, the shipped openssl recipe (required)"),
		schedulerConfig: fs.String("scheduler-config", "", "run this KubeSchedulerConfiguration file of deploy/ "+
			"(deploy/kube-scheduler-config.yaml) as the cluster's own kube-scheduler (user system:kube-scheduler), "+
			"in place of the render's Deployment seedance-scheduler"),
		dropVerb: fs.String("drop-verb", "", "negative test: remove a verb from the rendered RBAC before applying it "+
			"(KIND/NAME:RESOURCE:VERB, e.g. ClusterRole/seedance:nodes:list); the scenario must then fail"),
	}
}

// load reads the render and applies --drop-verb to it.
func (f *shippedFlags) load() (*shipped.Deploy, error) {
	if *f.rendered == "" || *f.certs == "" {
		return nil, usagef("--rendered and --certs-script are required: every scenario runs deploy/ as rendered (tests/k8s/shipped_test.sh)")
	}
	d, err := shipped.Load(*f.rendered)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if *f.dropVerb != "" {
		if err := d.DropVerb(*f.dropVerb); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	return d, nil
}

// shippedEnv is the render applied to a control plane: the recipe's certificates, the identities
// (ServiceAccount kubeconfigs, or the control plane's scheduler.conf), and an HTTPS client for the
// harness's own requests.
type shippedEnv struct {
	d         *shipped.Deploy
	c         *cluster.Cluster
	certs     string
	serverKC  string
	schedKC   string
	schedFile string // --scheduler-config, or "" for the render's Deployment seedance-scheduler
	client    *http.Client
	work      string
}

// applyShipped applies the render to c and makes the certificates and identities under work.
func applyShipped(ctx context.Context, c *cluster.Cluster, d *shipped.Deploy, f *shippedFlags, work string,
	step func(string, ...any)) (*shippedEnv, error) {
	applied, notApplied, err := d.Apply(ctx, c.Client)
	if err != nil {
		return nil, err
	}
	step("applied from %s: %s", d.Path, strings.Join(applied, ", "))
	step("run as processes, not applied: %s", strings.Join(notApplied, ", "))
	e := &shippedEnv{d: d, c: c, certs: filepath.Join(work, "pki"), work: work, schedFile: *f.schedulerConfig}
	if err := shipped.Certs(*f.certs, e.certs); err != nil {
		return nil, err
	}
	ids := filepath.Join(work, "identity")
	if e.serverKC, err = shipped.Identity(ctx, c.Client, c.Server, c.CAData, "seedance-system", "seedance", ids); err != nil {
		return nil, err
	}
	if e.schedFile != "" {
		e.schedKC = c.SchedulerKubeconfig
	} else if e.schedKC, err = shipped.Identity(ctx, c.Client, c.Server, c.CAData, "seedance-system", "seedance-scheduler", ids); err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(e.certs, "ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	// The harness reads GETs (readiness, /metrics, /v1/cluster, /v1/decisions) without a client
	// certificate, as Prometheus and the kubelet do; writes carry the token.
	e.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	return e, nil
}

// startServer runs the StatefulSet's container as replica seedance-ORDINAL in dir (a restart on
// the same dir keeps its ledger). configure, if not nil, edits the config file it will read.
func (e *shippedEnv) startServer(ctx context.Context, bin, dir string, ordinal int, configure func(path string) error) (*seedance.Server, error) {
	cmd, err := e.d.ServerCommand(dir, e.certs, e.serverKC, ordinal)
	if err != nil {
		return nil, err
	}
	if configure != nil {
		for _, a := range cmd.Args {
			if p, ok := strings.CutPrefix(a, "--config="); ok {
				if err := configure(p); err != nil {
					return nil, err
				}
			}
		}
	}
	srv, err := seedance.StartWith(ctx, bin, dir, cmd.Args, cmd.Env, e.client)
	if err != nil {
		return nil, err
	}
	srv.Token = cmd.Token
	return srv, nil
}

// startScheduler runs the shipped KubeSchedulerConfiguration (--scheduler-config's file, else
// the render's Deployment seedance-scheduler's) with its extender at base. The Scheduler's Name is
// its profile's schedulerName.
func (e *shippedEnv) startScheduler(ctx context.Context, base string, edit func(*shipped.Deploy, map[string]any)) (*cluster.Scheduler, error) {
	return e.startSchedulerGates(ctx, base, nil, edit)
}

// startSchedulerGates is startScheduler with kube-scheduler feature gates set while it runs.
func (e *shippedEnv) startSchedulerGates(ctx context.Context, base string, gates map[string]bool,
	edit func(*shipped.Deploy, map[string]any)) (*cluster.Scheduler, error) {
	name := "default-scheduler"
	f := func(cfg map[string]any) {
		if profiles, _ := cfg["profiles"].([]any); len(profiles) > 0 {
			if p, ok := profiles[0].(map[string]any); ok && p["schedulerName"] != nil {
				name = fmt.Sprint(p["schedulerName"])
			}
		}
		if edit != nil {
			edit(e.d, cfg)
		}
	}
	var text string
	var err error
	if e.schedFile != "" {
		text, err = e.d.SchedulerConfigFile(e.schedFile, e.certs, e.schedKC, base, f)
	} else {
		text, err = e.d.SchedulerConfig(e.work, e.certs, e.schedKC, base, f)
	}
	if err != nil {
		return nil, err
	}
	return e.c.StartScheduler(ctx, cluster.SchedulerOptions{Name: name, ConfigYAML: text, FeatureGates: gates})
}

// probeAnonymous checks mutual TLS as shipped: a client without a certificate is refused (401)
// on filter. It returns the server's count of 401 answers after the probe.
func probeAnonymous(srv *seedance.Server) (float64, error) {
	token := srv.Token
	srv.Token = ""
	code, body, err := srv.Do("POST", "/extender/filter", []byte(`{"Pod":{"metadata":{"name":"x","namespace":"x","uid":"x"}},"NodeNames":[]}`))
	srv.Token = token
	if err != nil || code != 401 {
		return 0, fmt.Errorf("filter without a client certificate: HTTP %d %.200s %v, want 401 (--client-ca as shipped)", code, body, err)
	}
	return srv.MetricSum("seedance_http_requests_total", map[string]string{"code": "401"})
}

// startShipped applies the render to c and starts one server and the scheduler. waitNodes: how
// many nodes the server's watch must hold before the scheduler starts. configure: the scenario's
// edit of the server's config file (nil: none; it must Note it). editScheduler: the scenario's
// changes to the scheduler's config (it must Note them). step prints progress.
func startShipped(ctx context.Context, c *cluster.Cluster, d *shipped.Deploy, f *shippedFlags, bin, work string,
	waitNodes int, timeout time.Duration, configure func(path string) error,
	editScheduler func(*shipped.Deploy, map[string]any), step func(string, ...any)) (*asShipped, error) {
	e, err := applyShipped(ctx, c, d, f, work, step)
	if err != nil {
		return nil, err
	}
	a := &asShipped{deploy: d, env: e}
	if a.srv, err = e.startServer(ctx, bin, filepath.Join(work, "seedance"), 0, configure); err != nil {
		return nil, err
	}
	a.token = a.srv.Token
	if err := a.srv.WaitReady(ctx, timeout); err != nil {
		a.stop()
		return nil, fmt.Errorf("%w (as ServiceAccount seedance with the rendered RBAC; log %s)", err, a.srv.LogFile)
	}
	if a.probes401, err = probeAnonymous(a.srv); err != nil {
		a.stop()
		return nil, err
	}
	if st, err := a.srv.WaitCluster(ctx, timeout, func(s *seedance.ClusterState) bool { return len(s.Nodes) == waitNodes }); err != nil {
		a.stop()
		return nil, fmt.Errorf("seedance's watch (as ServiceAccount seedance): %d of %d nodes: %w", len(st.Nodes), waitNodes, err)
	}
	if a.sched, err = e.startScheduler(ctx, a.srv.URL, editScheduler); err != nil {
		a.stop()
		return nil, err
	}
	for _, ch := range d.Changes {
		step("as shipped, except: %s", ch)
	}
	return a, nil
}

// checkNotBypassed: ignorable: true (as shipped) would hide an extender kube-scheduler cannot
// reach (a TLS failure, a 401), so every one of `placed` pods must have had Seedance's filter
// answered (200) and no request refused (401) beyond the harness's own probes401.
func checkNotBypassed(srv *seedance.Server, placed int, probes401 float64) (filtered, refused int, err error) {
	f, err := srv.MetricSum("seedance_http_requests_total", map[string]string{"path": "/extender/filter", "code": "200"})
	if err != nil {
		return 0, 0, err
	}
	r, err := srv.MetricSum("seedance_http_requests_total", map[string]string{"code": "401"})
	if err != nil {
		return 0, 0, err
	}
	r -= probes401
	if int(f) < placed || r > 0 {
		return int(f), int(r), fmt.Errorf("kube-scheduler reached Seedance's filter %v times for %d placed pods, %v requests refused 401: "+
			"the extender was bypassed (ignorable: true) or mutual TLS failed", f, placed, r)
	}
	return int(f), int(r), nil
}

func (a *asShipped) stop() {
	if a.sched != nil {
		a.sched.Stop()
	}
	if a.srv != nil {
		a.srv.Stop()
	}
}

// extenderScoreOnly is parity's change to the shipped scheduler config: every node filtered
// (percentageOfNodesToScore 100) and the extender's prioritize the only score, so that the node
// kube-scheduler picks is Seedance's (the shipped profile keeps kube-scheduler's score plugins,
// whose sum with Seedance's weighted score may pick another node than the simulator).
func extenderScoreOnly(d *shipped.Deploy, cfg map[string]any) {
	cfg["percentageOfNodesToScore"] = 100
	profiles, _ := cfg["profiles"].([]any)
	for _, p := range profiles {
		if m, ok := p.(map[string]any); ok {
			m["plugins"] = map[string]any{"score": map[string]any{"disabled": []any{map[string]any{"name": "*"}}}}
		}
	}
	d.Note("kube-scheduler (parity only): percentageOfNodesToScore 100 and the profile's score plugins disabled, so that the extender's score alone ranks nodes")
}

// addTenants is an operator's edit of the shipped config file (deploy/server/seedance-config.yaml):
// the shipped tenants list gains the scenario's tenants (lines of YAML, each "    - {...}"), and
// each server.KEY of set replaces the shipped value.
func addTenants(d *shipped.Deploy, tenants string, set map[string]string) func(path string) error {
	return func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := strings.TrimRight(string(b), "\n")
		const last = "    - {name: default, tier: gold}"
		if !strings.HasSuffix(text, last) {
			return fmt.Errorf("%s: the shipped config no longer ends with the tenants list (%q); update addTenants", path, last)
		}
		for _, k := range sortedKeys(set) {
			re := regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(k) + `: *[^ #]*`)
			if !re.MatchString(text) {
				return fmt.Errorf("%s: no server.%s to set; update addTenants", path, k)
			}
			text = re.ReplaceAllString(text, "  "+k+": "+set[k])
			d.Note("seedance server: server.%s set to %s in the ConfigMap's file", k, set[k])
		}
		var names []string
		for _, line := range strings.Split(strings.TrimRight(tenants, "\n"), "\n") {
			if m := regexp.MustCompile(`name: *([^,}]+)`).FindStringSubmatch(line); m != nil {
				names = append(names, m[1])
			}
		}
		d.Note("seedance server: tenants %s added to the ConfigMap's tenancy.tenants", strings.Join(names, ", "))
		return os.WriteFile(path, []byte(text+"\n"+tenants), 0o644)
	}
}

func sortedKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// startTCPProxy is the Service as kube-proxy makes it: each new TCP connection goes to the replica
// whose /readyz answered 200 at the last probe (every 100 ms), bytes copied both ways, so that
// mutual TLS runs end to end between kube-scheduler and the replica. With no ready replica a
// connection is closed at once (counted in h.cut, as are dials that fail).
func (h *harness) startTCPProxy() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var target atomic.Pointer[string]
	stop := make(chan struct{})
	go h.followReady(stop, func(r *seedance.Server) {
		if r == nil {
			target.Store(nil)
			return
		}
		host := strings.TrimPrefix(r.URL, "https://")
		target.Store(&host)
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				t := target.Load()
				if t == nil {
					h.cut.Add(1)
					return
				}
				up, err := net.DialTimeout("tcp", *t, time.Second)
				if err != nil {
					h.cut.Add(1)
					return
				}
				defer up.Close()
				go func() {
					io.Copy(up, conn)
					up.(*net.TCPConn).CloseWrite()
				}()
				io.Copy(conn, up)
			}()
		}
	}()
	return ln.Addr().String(), func() { ln.Close(); close(stop) }, nil
}
