package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/workload"
)

// failover: two replicas of deploy/'s StatefulSet `seedance` as rendered (--leader-elect, HTTPS
// with --client-ca, each under ServiceAccount seedance with the rendered RBAC) on the real control
// plane, and the render's kube-scheduler (profile `seedance`, node-cache, ignorable, no bindVerb:
// kube-scheduler binds) reaching them over mutual TLS through a TCP proxy that connects to
// whichever replica answers /readyz 200, as a Service would.
//
// Scenario 1 (leader kill -9 mid-stream, fail open): a stream of GPU pods is created; once a third
// of them are bound, the leader is killed with SIGKILL. The follower must become leader within the
// Lease's duration plus two retry periods (client-go's semantics and defaults: the follower
// counts the 15 s from when it last saw the lease change, which it sees at its next look, every
// 2 s + up to 20 % jitter, and it takes the lease at the look after expiry: at most ~19.8 s after
// the kill; measured 15.9 s). Until then kube-scheduler must keep placing pods without Seedance
// (ignorable: true) and log "Skipping extender as it returned error" for them. At the end every
// pod is bound, each exactly once (no pod's spec.nodeName ever changes), no node's bound GPUs
// exceed its capacity, and the new leader's GET /v1/cluster equals the API server's nodes, bound
// pods, GPU use and quota usage field by field (it learnt the fail-open placements from its watch).
//
// Scenario 2 (both replicas restarted): workloads are admitted through POST /v1/workloads; both
// replicas are killed with SIGKILL and started again on their own ledgers (--db kept), the one
// that acknowledged the decisions first. The state rebuilt from the watch equals the API
// server's, every acknowledged decision is still there (GET /v1/workloads/{ns}/{name}), and a
// new pod is still scheduled, through the restarted leader's filter.
func failover(ctx context.Context, args []string) error {
	fs := newFlags("failover")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	work := fs.String("work", "", "working directory (required; emptied first)")
	numNodes := fs.Int("nodes", 10, "8-GPU nodes")
	numPods := fs.Int("pods", 32, "GPU pods in the stream (1, 2, 1, 4 GPUs in turn)")
	interval := fs.Duration("interval", 150*time.Millisecond, "time between two pod creations")
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	timeout := fs.Duration("timeout", 90*time.Second, "how long to wait for each condition")
	sf := addShippedFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *bin == "" || *work == "" {
		return usagef("--seedance and --work are required")
	}
	if _, err := os.Stat(*bin); err != nil {
		return usagef("--seedance: %v", err)
	}
	if *numNodes < 1 || *numPods < 3 || *numPods*2 >= *numNodes*8 {
		return usagef("--pods must be 3..%d for --nodes %d (the stream asks 2 GPUs a pod on average, and one more pod comes after the restarts)", *numNodes*4-1, *numNodes)
	}
	deploy, err := sf.load()
	if err != nil {
		return err
	}
	step, t0 := stepLog("failover")
	c, tap, stopControlPlane, err := startControlPlane(ctx, *work, *verbose)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	const skipping = "Skipping extender as it returned error"
	tap.watch(skipping)
	step("kube-apiserver %s up (RBAC, default admission plugins)", c.Server)

	h := &harness{ctx: ctx, c: c, bin: *bin, work: *work, timeout: *timeout, step: step}
	defer h.stopReplicas()
	env, err := applyShipped(ctx, c, deploy, sf, *work, step)
	if err != nil {
		return err
	}
	tenants := addTenants(deploy, "    - {name: team-a, cohort: all, tier: gold, quota: {gpu: {nominal: 64}}}\n"+
		"    - {name: team-b, cohort: all, tier: silver, quota: {gpu: {nominal: 64}}}\n", nil)
	h.start = func(name string, ordinal int) (*seedance.Server, error) {
		return env.startServer(ctx, *bin, filepath.Join(*work, name), ordinal, tenants)
	}
	leader, err := h.startPair()
	if err != nil {
		return err
	}
	step("replicas up: %s leads (%s), the other follows", h.names[leader], h.replicas[leader].URL)

	if _, err := probeAnonymous(h.replicas[leader]); err != nil {
		return err
	}
	addr, closeProxy, err := h.startTCPProxy()
	if err != nil {
		return err
	}
	defer closeProxy()
	// The proxy, as kube-scheduler and a client of the Service reach the leader.
	service := seedance.Remote("https://"+addr, env.client)
	sched, err := env.startScheduler(ctx, service.URL, nil)
	if err != nil {
		return err
	}
	defer sched.Stop()
	for _, ch := range deploy.Changes {
		step("as shipped, except: %s", ch)
	}
	step("kube-scheduler %q (deploy/'s config, mutual TLS) -> TCP proxy %s -> the ready replica", sched.Name, addr)

	nodes := make([]workload.Node, *numNodes)
	for i := range nodes {
		nodes[i] = workload.Node{Name: fmt.Sprintf("gpu-%02d", i), CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"),
			GPU: resource.MustParse("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"}
	}
	if err := workload.CreateNodes(ctx, c.Client, nodes, 4); err != nil {
		return err
	}
	sizes := []string{"1", "2", "1", "4"}
	pods := make([]workload.Pod, *numPods)
	for i := range pods {
		ns := []string{"team-a", "team-b"}[i%2]
		pods[i] = workload.Pod{Name: fmt.Sprintf("train-%03d", i), Namespace: ns, CPU: resource.MustParse("2"),
			Memory: resource.MustParse("8Gi"), GPU: resource.MustParse(sizes[i%len(sizes)]), Tenant: ns}
	}
	if err := workload.EnsureNamespaces(ctx, c.Client, pods); err != nil {
		return err
	}
	tr, err := trackBindings(ctx, c.Client)
	if err != nil {
		return err
	}
	defer tr.stop()

	// Scenario 1: the stream, and the leader killed while binds are in flight.
	created := make(chan error, 1)
	go func() {
		for i := range pods {
			if _, err := c.Client.CoreV1().Pods(pods[i].Namespace).Create(ctx, workload.PodObject(pods[i], "seedance"), metav1.CreateOptions{}); err != nil {
				created <- fmt.Errorf("create pod %s: %w", pods[i].Name, err)
				return
			}
			time.Sleep(*interval)
		}
		created <- nil
	}()
	if err := waitFor(ctx, *timeout, func() bool { return tr.bound() >= len(pods)/3 }); err != nil {
		return fmt.Errorf("%d of %d pods bound before the kill: %w", tr.bound(), len(pods), err)
	}
	// As shipped kube-scheduler binds (no bindVerb): the leader dies between two pods' decisions;
	// until the follower leads, ignorable: true lets kube-scheduler place pods without Seedance
	// (fail open, logged), and the new leader must learn them from its watch.
	h.replicas[leader].Kill()
	step("kill -9 %s (the leader) mid-stream, with %d of %d pods bound", h.names[leader], tr.bound(), len(pods))
	killedAt := time.Now()
	boundAtKill := tr.bound()
	newLeader, err := h.waitLeader(leader, *timeout)
	if err != nil {
		return err
	}
	takeover := time.Since(killedAt)
	boundInGap := tr.bound() - boundAtKill
	step("%s leads %.1f s after the kill; meanwhile kube-scheduler bound %d pods without Seedance", h.names[newLeader],
		takeover.Seconds(), boundInGap)
	// Fail open (ignorable: true), loudly: pods were placed while no replica answered, and
	// kube-scheduler logged each skip.
	loud := tap.matching(skipping)
	if boundInGap < 1 || len(loud) < 1 {
		return fmt.Errorf("with no Seedance replica ready, kube-scheduler bound %d pods and logged %d %q lines: "+
			"want both >= 1 (ignorable: true fails open, loudly)", boundInGap, len(loud), skipping)
	}
	step("kube-scheduler's log, %d lines like: %.240s", len(loud), loud[0])
	if limit := 20 * time.Second; takeover > limit {
		return fmt.Errorf("failover took %.1f s, over the lease's 15 s + two retry periods (2 s + 20%% jitter)", takeover.Seconds())
	}
	if err := <-created; err != nil {
		return err
	}
	if err := waitFor(ctx, *timeout, func() bool { return tr.bound() == len(pods) }); err != nil {
		return fmt.Errorf("%d of %d pods bound after the failover: %w", tr.bound(), len(pods), err)
	}
	step("all %d pods bound (%d after the kill)", len(pods), len(pods)-boundAtKill)
	if err := h.checkState(tr, h.replicas[newLeader]); err != nil {
		return fmt.Errorf("after the failover: %w", err)
	}
	step("each pod bound once, no node over capacity, %s's /v1/cluster equals the API server's", h.names[newLeader])

	// Restart the killed replica: it follows.
	if h.replicas[leader], err = h.startReplica(h.names[leader]); err != nil {
		return err
	}

	// Scenario 2: admission decisions acknowledged, then both replicas killed and restarted.
	acked, err := h.admit(h.replicas[newLeader], 8)
	if err != nil {
		return err
	}
	step("%d workloads admitted through %s (its ledger)", len(acked), h.names[newLeader])
	h.replicas[0].Kill()
	h.replicas[1].Kill()
	step("kill -9 both replicas")
	if h.replicas[newLeader], err = h.startReplica(h.names[newLeader]); err != nil {
		return err
	}
	restartedAt := time.Now()
	if _, err := h.waitLeader(1-newLeader, *timeout); err != nil {
		return err
	}
	// Legacy replicas' identity is host-pid, so the restarted one waits for the dead holder's lease
	// to expire; as shipped it is the pod name, which a restarted StatefulSet pod keeps.
	step("%s restarted and leads %.1f s later", h.names[newLeader], time.Since(restartedAt).Seconds())
	other := 1 - newLeader
	if h.replicas[other], err = h.startReplica(h.names[other]); err != nil {
		return err
	}
	if err := h.checkState(tr, h.replicas[newLeader]); err != nil {
		return fmt.Errorf("after both restarts: %w", err)
	}
	if err := h.checkAdmitted(service, acked); err != nil {
		return err
	}
	step("state rebuilt from the watch equals the API server's; %d acknowledged admissions still there", len(acked))
	last := workload.Pod{Name: "after-restart", Namespace: "team-a", CPU: resource.MustParse("1"), Memory: resource.MustParse("1Gi"),
		GPU: resource.MustParse("1"), Tenant: "team-a"}
	if _, err := c.Client.CoreV1().Pods("team-a").Create(ctx, workload.PodObject(last, "seedance"), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := waitFor(ctx, *timeout, func() bool { return tr.bound() == len(pods)+1 }); err != nil {
		return fmt.Errorf("a pod created after both restarts was not bound: %w", err)
	}
	if err := h.checkState(tr, h.replicas[newLeader]); err != nil {
		return fmt.Errorf("after the last pod: %w", err)
	}
	step("a pod created after both restarts is bound; the state still equals the API server's")
	{
		// ignorable: true would hide a kube-scheduler that cannot reach Seedance: the last pod must
		// have gone through the restarted leader's filter over mutual TLS, nothing refused.
		r := h.replicas[newLeader]
		filtered, err := r.MetricSum("seedance_http_requests_total", map[string]string{"path": "/extender/filter", "code": "200"})
		if err != nil {
			return err
		}
		refused, err := r.MetricSum("seedance_http_requests_total", map[string]string{"code": "401"})
		if err != nil {
			return err
		}
		if filtered < 1 || refused > 0 {
			return fmt.Errorf("the restarted leader answered filter %v times (want >= 1) and refused %v requests (want 0): "+
				"kube-scheduler bypassed Seedance (ignorable: true) or mutual TLS failed", filtered, refused)
		}
		step("the last pod went through %s's filter over mutual TLS (%v filters answered, none refused)", h.names[newLeader], filtered)
	}

	summary := map[string]any{"result": "pass", "pods": len(pods) + 1, "nodes": len(nodes),
		"bound_at_kill": boundAtKill, "requests_cut_by_kills": h.cut.Load(), "takeover_seconds": math.Round(takeover.Seconds()*10) / 10,
		"admissions_kept": len(acked), "seconds": math.Round(time.Since(t0).Seconds()*10) / 10}
	b, _ := json.Marshal(summary)
	fmt.Println(string(b))
	return nil
}

type harness struct {
	ctx      context.Context
	c        *cluster.Cluster
	bin      string
	work     string
	timeout  time.Duration
	step     func(string, ...any)
	mu       sync.Mutex
	names    [2]string
	replicas [2]*seedance.Server
	cut      atomic.Int64 // extender requests the proxy forwarded that got no answer (the replica died)
	armed    atomic.Bool  // kill the replica that answers the next request killOn matches
	killed   chan struct{}
	killOn   func(*http.Request) bool // startProxy: which answer arms the kill
	// start starts replica `name` (ordinal 0 or 1): the StatefulSet's container as rendered.
	start func(name string, ordinal int) (*seedance.Server, error)
}

// startReplica starts (or restarts, on the same directory and so the same ledger) one replica.
func (h *harness) startReplica(name string) (*seedance.Server, error) {
	i := 0
	if name == "replica-b" {
		i = 1
	}
	h.names[i] = name
	s, err := h.start(name, i)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	h.mu.Lock()
	h.replicas[i] = s
	h.mu.Unlock()
	return s, nil
}

// startPair starts replica-a and replica-b and waits until one of them leads; it returns the
// leader's index. stopReplicas stops every replica started.
func (h *harness) startPair() (int, error) {
	for _, name := range []string{"replica-a", "replica-b"} {
		if _, err := h.startReplica(name); err != nil {
			return -1, err
		}
	}
	return h.waitLeader(-1, h.timeout)
}

func (h *harness) stopReplicas() {
	for _, r := range h.replicas {
		if r != nil {
			r.Stop()
		}
	}
}

// waitLeader waits until a replica other than `not` answers /readyz 200 and reports
// seedance_leader 1, and returns its index.
func (h *harness) waitLeader(not int, timeout time.Duration) (int, error) {
	found := -1
	err := waitFor(h.ctx, timeout, func() bool {
		for i, r := range h.snapshot() {
			if i == not || r == nil {
				continue
			}
			if v, err := r.Metric("seedance_leader"); err == nil && v == 1 && r.Ready() {
				found = i
				return true
			}
		}
		return false
	})
	if err != nil {
		return -1, fmt.Errorf("no replica became leader: %w", err)
	}
	return found, nil
}

func (h *harness) snapshot() [2]*seedance.Server {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.replicas
}

// followReady probes the replicas' /readyz every 100 ms (a readiness probe with periodSeconds
// 0.1) and calls set with the first ready one (nil: none), until stop is closed.
func (h *harness) followReady(stop <-chan struct{}, set func(*seedance.Server)) {
	for {
		var ready *seedance.Server
		for _, r := range h.snapshot() {
			if r != nil && r.URL != "" && r.Ready() {
				ready = r
				break
			}
		}
		set(ready)
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startProxy is an ingress in front of the Service: it forwards each HTTP request, over transport
// (HTTPS to the replicas), to the replica whose /readyz answered 200 at its last probe (every
// 100 ms, as a readiness probe with periodSeconds 0.1), else answers 503.
func (h *harness) startProxy(transport http.RoundTripper) *httpServer {
	var target atomic.Pointer[url.URL]
	stop := make(chan struct{})
	go h.followReady(stop, func(r *seedance.Server) {
		var ready *url.URL
		if r != nil {
			ready, _ = url.Parse(r.URL)
		}
		target.Store(ready)
	})
	rp := &httputil.ReverseProxy{
		Transport: transport,
		Rewrite: func(r *httputil.ProxyRequest) {
			if t := target.Load(); t != nil {
				r.SetURL(t)
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			if h.killOn(resp.Request) && h.armed.CompareAndSwap(true, false) {
				for _, r := range h.snapshot() {
					if r == nil {
						continue
					}
					if u, err := url.Parse(r.URL); err == nil && resp.Request.URL.Host == u.Host {
						r.Kill()
					}
				}
				close(h.killed)
				return fmt.Errorf("the leader was killed before its answer was relayed")
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			h.cut.Add(1)
			http.Error(w, `{"error":"no ready replica: `+err.Error()+`"}`, http.StatusBadGateway)
		},
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if target.Load() == nil {
			http.Error(w, `{"error":"no ready replica"}`, http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	})
	return &httpServer{Server: httptest.NewServer(handler), onClose: func() { close(stop) }}
}

// httpServer is the proxy's listener; Close also stops its readiness probes.
type httpServer struct {
	*httptest.Server
	onClose func()
}

func (s *httpServer) Close() {
	s.Server.Close()
	s.onClose()
}

// admit submits n workloads (half each tenant, 2 GPUs each) to s and returns the keys of those
// its responses acknowledged as admitted.
func (h *harness) admit(s *seedance.Server, n int) ([]string, error) {
	var list []map[string]any
	for i := 0; i < n; i++ {
		ns := []string{"team-a", "team-b"}[i%2]
		list = append(list, map[string]any{"namespace": ns, "name": fmt.Sprintf("job-%d", i), "uid": fmt.Sprintf("uid-job-%d", i),
			"tenant": ns, "priority": 0, "request": map[string]any{"gpu": 2}})
	}
	body, _ := json.Marshal(map[string]any{"workloads": list})
	code, resp, err := s.Do("POST", "/v1/workloads", body)
	if err != nil || code != 200 {
		return nil, fmt.Errorf("POST /v1/workloads: HTTP %d %v: %.300s", code, err, resp)
	}
	var out struct {
		Decisions []struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"decisions"`
	}
	if err := json.Unmarshal(resp, &out); err != nil {
		return nil, fmt.Errorf("POST /v1/workloads: %w: %.300s", err, resp)
	}
	var acked []string
	for _, d := range out.Decisions {
		if d.Kind == "admit" {
			acked = append(acked, d.Namespace+"/"+d.Name)
		}
	}
	if len(acked) != n {
		return nil, fmt.Errorf("POST /v1/workloads admitted %d of %d: %.300s", len(acked), n, resp)
	}
	return acked, nil
}

// checkAdmitted asks through the proxy (the leader) for each acknowledged workload, retrying
// while the proxy has no ready replica (503) as a client of the Service would.
func (h *harness) checkAdmitted(p *seedance.Server, acked []string) error {
	for _, key := range acked {
		var code int
		var body []byte
		var err error
		waitFor(h.ctx, h.timeout, func() bool {
			code, body, err = p.Do("GET", "/v1/workloads/"+key, nil)
			return err == nil && code != http.StatusServiceUnavailable
		})
		if err != nil || code != 200 {
			return fmt.Errorf("GET /v1/workloads/%s after both restarts: HTTP %d %v: %.300s", key, code, err, body)
		}
		var w struct {
			Workload struct {
				State string `json:"state"`
			} `json:"workload"`
		}
		if err := json.Unmarshal(body, &w); err != nil || w.Workload.State != "admitted" {
			return fmt.Errorf("GET /v1/workloads/%s after both restarts: state %q, want admitted (%v): %.300s", key, w.Workload.State, err, body)
		}
	}
	return nil
}

// checkState: every pod bound once, no node over its GPUs, and s's /v1/cluster equal to the API
// server's nodes, bound pods, GPU use and quota usage (polled until equal or the timeout: the
// watch may trail the API server by a few events).
func (h *harness) checkState(tr *bindingTracker, s *seedance.Server) error {
	if moved := tr.moved(); len(moved) > 0 {
		return fmt.Errorf("pods bound more than once (spec.nodeName changed): %v", moved)
	}
	var want, got map[string]any
	var lastErr error
	err := waitFor(h.ctx, h.timeout, func() bool {
		var err error
		if want, err = expectedCluster(h.ctx, h.c.Client); err != nil {
			lastErr = err
			return false
		}
		code, body, err := s.Do("GET", "/v1/cluster", nil)
		if err != nil || code != 200 {
			lastErr = fmt.Errorf("GET /v1/cluster: HTTP %d %v", code, err)
			return false
		}
		got = map[string]any{}
		if err := json.Unmarshal(body, &got); err != nil {
			lastErr = err
			return false
		}
		got = observedCluster(got)
		// A configured tenant no pod names (deploy/'s `default`) uses nothing.
		if gq, ok := got["quota"].(map[string]any); ok {
			wq := want["quota"].(map[string]any)
			for t, use := range gq {
				if _, known := wq[t]; !known && reflect.DeepEqual(use, map[string]any{"gpu": float64(0)}) {
					wq[t] = use
				}
			}
		}
		lastErr = nil
		return reflect.DeepEqual(want, got)
	})
	if err != nil {
		w, _ := json.MarshalIndent(want, "", " ")
		g, _ := json.MarshalIndent(got, "", " ")
		return fmt.Errorf("/v1/cluster differs from the API server (%v, last error %v):\nserver: %s\napi server: %s", err, lastErr, g, w)
	}
	return nil
}

// expectedCluster computes /v1/cluster's fields from the API server's objects alone, and checks
// that no node's bound GPUs exceed its capacity.
func expectedCluster(ctx context.Context, c kubernetes.Interface) (map[string]any, error) {
	nl, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	pl, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	nodes := map[string]any{}
	capGPU := map[string]int64{}
	used := map[string]int64{}
	for _, n := range nl.Items {
		a := n.Status.Allocatable
		g := a[workload.GPUResource]
		capGPU[n.Name] = g.Value()
		mem := a[corev1.ResourceMemory]
		nodes[n.Name] = map[string]any{"cpu_m": float64(a.Cpu().MilliValue()), "memory_mi": float64((mem.Value() + (1<<20 - 1)) >> 20),
			"gpus": float64(g.Value())}
	}
	pods := map[string]any{}
	quota := map[string]any{"team-a": map[string]any{"gpu": float64(0)}, "team-b": map[string]any{"gpu": float64(0)}}
	for _, p := range pl.Items {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		var gpus int64
		for _, ct := range p.Spec.Containers {
			q := ct.Resources.Requests[workload.GPUResource]
			gpus += q.Value()
		}
		used[p.Spec.NodeName] += gpus
		pods[p.Namespace+"/"+p.Name] = map[string]any{"node": p.Spec.NodeName, "uid": string(p.UID), "gpu_milli": float64(gpus * 1000)}
		if t, ok := quota[p.Labels["seedance.io/tenant"]].(map[string]any); ok {
			t["gpu"] = t["gpu"].(float64) + float64(gpus*1000)
		}
	}
	for name, n := range nodes {
		if used[name] > capGPU[name] {
			return nil, fmt.Errorf("node %s: pods bound in the API server use %d GPUs of %d", name, used[name], capGPU[name])
		}
		n.(map[string]any)["gpu_milli_used"] = float64(used[name] * 1000)
	}
	return map[string]any{"nodes": nodes, "pods": pods, "quota": quota}, nil
}

// observedCluster keeps the fields expectedCluster computes (gpu_model is the catalog's name,
// checked non-empty; quota resources other than gpu are not limited here).
func observedCluster(s map[string]any) map[string]any {
	if nodes, ok := s["nodes"].(map[string]any); ok {
		for _, n := range nodes {
			if m, ok := n.(map[string]any); ok {
				if m["gpu_model"] == "" {
					m["gpu_model_missing"] = true
				}
				delete(m, "gpu_model")
			}
		}
	}
	if quota, ok := s["quota"].(map[string]any); ok {
		for t, use := range quota {
			if m, ok := use.(map[string]any); ok {
				quota[t] = map[string]any{"gpu": m["gpu"]}
			}
		}
	}
	return s
}

// bindingTracker records, from a watch started before the first pod, every node each pod was
// seen bound to.
type bindingTracker struct {
	mu    sync.Mutex
	nodes map[string][]string
	stopC chan struct{}
}

func trackBindings(ctx context.Context, c kubernetes.Interface) (*bindingTracker, error) {
	t := &bindingTracker{nodes: map[string][]string{}, stopC: make(chan struct{})}
	observe := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		key := p.Namespace + "/" + p.Name
		t.mu.Lock()
		defer t.mu.Unlock()
		seen := t.nodes[key]
		if len(seen) == 0 || seen[len(seen)-1] != p.Spec.NodeName {
			t.nodes[key] = append(seen, p.Spec.NodeName)
		}
	}
	factory := informers.NewSharedInformerFactory(c, 0)
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: observe,
		UpdateFunc: func(_, n any) { observe(n) }}); err != nil {
		return nil, err
	}
	factory.Start(t.stopC)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("pod informer did not sync")
	}
	return t, nil
}

func (t *bindingTracker) stop() { close(t.stopC) }

func (t *bindingTracker) bound() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.nodes)
}

func (t *bindingTracker) moved() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for k, v := range t.nodes {
		if len(v) > 1 {
			out = append(out, fmt.Sprintf("%s %v", k, v))
		}
	}
	sort.Strings(out)
	return out
}

// waitFor polls cond every 50 ms until it holds or the timeout.
func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
}
