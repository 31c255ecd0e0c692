package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/shipped"
)

// asShipped is deploy/ as rendered, running on a control plane started with AsShipped (RBAC, the
// default admission plugins): the RBAC and config objects applied, `seedance server` with the
// StatefulSet's args over mutual TLS under its ServiceAccount, kube-scheduler with the
// Deployment's KubeSchedulerConfiguration under its own (internal/shipped says what is mapped).
type asShipped struct {
	deploy *shipped.Deploy
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

// shippedEnv is the render applied to a control plane: the recipe's certificates, the two
// ServiceAccounts' kubeconfigs, and an HTTPS client for the harness's own requests.
type shippedEnv struct {
	d        *shipped.Deploy
	certs    string
	serverKC string
	schedKC  string
	client   *http.Client
	work     string
}

// applyShipped applies the render to c and makes the certificates and identities under work.
func applyShipped(ctx context.Context, c *cluster.Cluster, d *shipped.Deploy, certsScript, work string,
	step func(string, ...any)) (*shippedEnv, error) {
	applied, notApplied, err := d.Apply(ctx, c.Client)
	if err != nil {
		return nil, err
	}
	step("applied from %s: %s", d.Path, strings.Join(applied, ", "))
	step("run as processes, not applied: %s", strings.Join(notApplied, ", "))
	e := &shippedEnv{d: d, certs: filepath.Join(work, "pki"), work: work}
	if err := shipped.Certs(certsScript, e.certs); err != nil {
		return nil, err
	}
	ids := filepath.Join(work, "identity")
	if e.serverKC, err = shipped.Identity(ctx, c.Client, c.Server, c.CAData, "seedance-system", "seedance", ids); err != nil {
		return nil, err
	}
	if e.schedKC, err = shipped.Identity(ctx, c.Client, c.Server, c.CAData, "seedance-system", "seedance-scheduler", ids); err != nil {
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

// startScheduler runs the Deployment's KubeSchedulerConfiguration with its extender at base.
func (e *shippedEnv) startScheduler(ctx context.Context, c *cluster.Cluster, base string,
	edit func(*shipped.Deploy, map[string]any)) (*cluster.Scheduler, error) {
	var f func(map[string]any)
	if edit != nil {
		f = func(cfg map[string]any) { edit(e.d, cfg) }
	}
	text, err := e.d.SchedulerConfig(e.work, e.certs, e.schedKC, base, f)
	if err != nil {
		return nil, err
	}
	return c.StartScheduler(ctx, cluster.SchedulerOptions{Name: "seedance", ConfigYAML: text})
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
// many nodes the server's watch must hold before the scheduler starts. editScheduler: the
// scenario's changes to the scheduler's config (it must Note them). step prints progress.
func startShipped(ctx context.Context, c *cluster.Cluster, d *shipped.Deploy, bin, certsScript, work string,
	waitNodes int, timeout time.Duration, editScheduler func(*shipped.Deploy, map[string]any),
	step func(string, ...any)) (*asShipped, error) {
	e, err := applyShipped(ctx, c, d, certsScript, work, step)
	if err != nil {
		return nil, err
	}
	a := &asShipped{deploy: d}
	if a.srv, err = e.startServer(ctx, bin, filepath.Join(work, "seedance"), 0, nil); err != nil {
		return nil, err
	}
	a.token = a.srv.Token
	if err := a.srv.WaitReady(ctx, timeout); err != nil {
		a.stop()
		return nil, err
	}
	if a.probes401, err = probeAnonymous(a.srv); err != nil {
		a.stop()
		return nil, err
	}
	if st, err := a.srv.WaitCluster(ctx, timeout, func(s *seedance.ClusterState) bool { return len(s.Nodes) == waitNodes }); err != nil {
		a.stop()
		return nil, fmt.Errorf("seedance's watch (as ServiceAccount seedance): %d of %d nodes: %w", len(st.Nodes), waitNodes, err)
	}
	if a.sched, err = e.startScheduler(ctx, c, a.srv.URL, editScheduler); err != nil {
		a.stop()
		return nil, err
	}
	for _, ch := range d.Changes {
		step("as shipped, except: %s", ch)
	}
	return a, nil
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

// addTenants is failover's edit of the shipped config file (an operator's edit of
// deploy/server/seedance-config.yaml): the shipped tenants list gains team-a and team-b with 64 GPUs
// of quota each, so that the scenario checks quota usage per tenant across the failover.
func addTenants(d *shipped.Deploy) func(path string) error {
	return func(path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		const last = "    - {name: default, tier: gold}"
		if !strings.HasSuffix(strings.TrimRight(string(b), "\n"), last) {
			return fmt.Errorf("%s: the shipped config no longer ends with the tenants list (%q); update addTenants", path, last)
		}
		d.Note("seedance server: tenants team-a and team-b (gpu nominal 64, cohort all) added to the ConfigMap's tenancy.tenants")
		extra := "    - {name: team-a, cohort: all, tier: gold, quota: {gpu: {nominal: 64}}}\n" +
			"    - {name: team-b, cohort: all, tier: silver, quota: {gpu: {nominal: 64}}}\n"
		return os.WriteFile(path, append([]byte(strings.TrimRight(string(b), "\n")+"\n"), extra...), 0o644)
	}
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
