package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// startShipped applies the render to c and starts the server and the scheduler. waitNodes: how
// many nodes the server's watch must hold before the scheduler starts. editScheduler: the
// scenario's changes to the scheduler's config (it must Note them). step prints progress.
func startShipped(ctx context.Context, c *cluster.Cluster, d *shipped.Deploy, bin, certsScript, work string,
	waitNodes int, timeout time.Duration, editScheduler func(*shipped.Deploy, map[string]any),
	step func(string, ...any)) (*asShipped, error) {
	applied, notApplied, err := d.Apply(ctx, c.Client)
	if err != nil {
		return nil, err
	}
	step("applied from %s: %s", d.Path, strings.Join(applied, ", "))
	step("run as processes, not applied: %s", strings.Join(notApplied, ", "))
	certs := filepath.Join(work, "pki")
	if err := shipped.Certs(certsScript, certs); err != nil {
		return nil, err
	}
	ids := filepath.Join(work, "identity")
	serverKC, err := shipped.Identity(ctx, c.Client, c.Server, c.CAData, "seedance-system", "seedance", ids)
	if err != nil {
		return nil, err
	}
	schedKC, err := shipped.Identity(ctx, c.Client, c.Server, c.CAData, "seedance-system", "seedance-scheduler", ids)
	if err != nil {
		return nil, err
	}
	cmd, err := d.ServerCommand(filepath.Join(work, "seedance"), certs, serverKC)
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(filepath.Join(certs, "ca.crt"))
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	// The harness reads GETs (readiness, /metrics, /v1/cluster, /v1/decisions) without a client
	// certificate, as Prometheus and the kubelet do.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	a := &asShipped{deploy: d, token: cmd.Token}
	a.srv, err = seedance.StartWith(ctx, bin, filepath.Join(work, "seedance"), cmd.Args, cmd.Env, client)
	if err != nil {
		return nil, err
	}
	step("seedance %s", strings.Join(cmd.Args, " "))
	if err := a.srv.WaitReady(ctx, timeout); err != nil {
		a.stop()
		return nil, err
	}
	// Mutual TLS as shipped: a client without a certificate is refused on the verbs.
	if code, body, err := a.srv.Do("POST", "/extender/filter", []byte(`{"Pod":{"metadata":{"name":"x","namespace":"x","uid":"x"}},"NodeNames":[]}`)); err != nil || code != 401 {
		a.stop()
		return nil, fmt.Errorf("filter without a client certificate: HTTP %d %.200s %v, want 401 (--client-ca as shipped)", code, body, err)
	}
	if a.probes401, err = a.srv.MetricSum("seedance_http_requests_total", map[string]string{"code": "401"}); err != nil {
		a.stop()
		return nil, err
	}
	if st, err := a.srv.WaitCluster(ctx, timeout, func(s *seedance.ClusterState) bool { return len(s.Nodes) == waitNodes }); err != nil {
		a.stop()
		return nil, fmt.Errorf("seedance's watch (as ServiceAccount seedance): %d of %d nodes: %w", len(st.Nodes), waitNodes, err)
	}
	var edit func(map[string]any)
	if editScheduler != nil {
		edit = func(cfg map[string]any) { editScheduler(d, cfg) }
	}
	text, err := d.SchedulerConfig(work, certs, schedKC, a.srv.URL, edit)
	if err != nil {
		a.stop()
		return nil, err
	}
	a.sched, err = c.StartScheduler(ctx, cluster.SchedulerOptions{Name: "seedance", ConfigYAML: text})
	if err != nil {
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
