package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"seedance.dev/tests/k8s/internal/seedance"
)

// admission-failover: no acknowledged admission decision is lost across a leader failover.
//
// Two replicas of deploy/'s StatefulSet `seedance` as rendered (its args: --leader-elect, HTTPS
// with --client-ca, --token-file; its ServiceAccount under the rendered RBAC, its Lease Role) on
// the real control plane share one PostgreSQL admission log: Secret seedance-admission-db's `url`
// (SEEDANCE_ADMISSION_DB, as the StatefulSet reads it) is the scenario's PostgreSQL. Two clients (one per tenant, each tenant its own
// cohort, 16 GPUs of quota, 2 GPUs a workload) submit workloads one per request through a
// readiness-routing proxy (the Service), and finish admitted ones, while the leader is killed
// with kill -9 right after it answered a POST /v1/workloads and before that answer is relayed (the
// decision is committed, the client sees a 502 and resubmits with the same uid). A request
// without an answer is retried until one comes, as a client of the Service would.
//
// After the new leader took the Lease (it rebuilds from the log before /readyz answers 200):
// every workload is found by the new leader (GET /v1/workloads/{ns}/{name}) in the state its last
// acknowledgement said (admitted stays admitted, finished stays finished, pending may have been
// admitted since), and no tenant's admitted GPUs exceed its quota.
func admissionFailover(ctx context.Context, args []string) error {
	fs := newFlags("admission-failover")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	work := fs.String("work", "", "working directory (required; emptied first)")
	db := fs.String("admission-db", "", "PostgreSQL URL of the shared admission log (default: $SEEDANCE_PG_URL/postgres, as pg_test.sh sets it)")
	perTenant := fs.Int("workloads", 30, "workloads each tenant's client submits")
	killAfter := fs.Int("kill-after", 12, "acknowledged submissions before the kill is armed")
	interval := fs.Duration("interval", 100*time.Millisecond, "time between a client's requests")
	shared := fs.Bool("shared", true, "share the PostgreSQL admission log (false: each replica on its own SQLite ledger, the failure this scenario must catch)")
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	timeout := fs.Duration("timeout", 90*time.Second, "how long to wait for each condition")
	sf := addShippedFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	deploy, err := sf.load()
	if err != nil {
		return err
	}
	if *bin == "" || *work == "" {
		return usagef("--seedance and --work are required")
	}
	if !*shared {
		*db = "-"
	}
	if *db == "" && os.Getenv("SEEDANCE_PG_URL") != "" {
		*db = os.Getenv("SEEDANCE_PG_URL") + "/postgres"
	}
	if *db == "" {
		return usagef("--admission-db (or $SEEDANCE_PG_URL) is required: the replicas share a PostgreSQL admission log")
	}
	if *perTenant < 4 || *killAfter < 1 || *killAfter >= 2**perTenant {
		return usagef("--workloads must be >= 4 and --kill-after in [1, 2 x --workloads)")
	}
	step, t0 := stepLog("admission-failover")
	c, _, stopControlPlane, err := startControlPlane(ctx, *work, *verbose)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	step("kube-apiserver %s up (RBAC, default admission plugins)", c.Server)

	const quota, gpus = 16, 2
	if *shared {
		deploy.AdmissionDB = *db
	}
	env, err := applyShipped(ctx, c, deploy, sf, *work, step)
	if err != nil {
		return err
	}
	tenants := addTenants(deploy, fmt.Sprintf("    - {name: team-a, cohort: a, tier: gold, quota: {gpu: {nominal: %d}}}\n"+
		"    - {name: team-b, cohort: b, tier: silver, quota: {gpu: {nominal: %d}}}\n", quota, quota),
		map[string]string{"admission_mode": "strict"})
	h := &harness{ctx: ctx, c: c, bin: *bin, work: *work, timeout: *timeout, step: step}
	h.start = func(name string, ordinal int) (*seedance.Server, error) {
		return env.startServer(ctx, *bin, filepath.Join(*work, name), ordinal, tenants)
	}
	h.killOn = func(r *http.Request) bool { return r.Method == "POST" && r.URL.Path == "/v1/workloads" }
	defer h.stopReplicas()
	leader, err := h.startPair()
	if err != nil {
		return err
	}
	if _, err := probeAnonymous(h.replicas[leader]); err != nil {
		return err
	}
	for _, ch := range deploy.Changes {
		step("as shipped, except: %s", ch)
	}
	step("replicas up (shared PostgreSQL admission log from Secret seedance-admission-db: %v): %s leads", *shared, h.names[leader])
	// The clients reach the leader as an ingress would: HTTPS to the ready replica, their bearer
	// token (Secret seedance-token) passed through.
	proxy := h.startProxy(env.client.Transport)
	defer proxy.Close()
	svc := &seedance.Server{URL: proxy.URL, Token: h.replicas[leader].Token}

	book := &admissionBook{state: map[string]string{}, acked: map[string]bool{}}
	h.killed = make(chan struct{})
	var wg sync.WaitGroup
	var arm sync.Once
	errs := make(chan error, 2)
	for _, tenant := range []string{"team-a", "team-b"} {
		wg.Add(1)
		go func(tenant string) {
			defer wg.Done()
			errs <- book.client(ctx, svc, tenant, *perTenant, gpus, *interval, *timeout, func() {
				if book.ackedSubmits() >= *killAfter {
					arm.Do(func() { h.armed.Store(true) })
				}
			})
		}(tenant)
	}
	var killedAt time.Time
	select {
	case <-h.killed:
		killedAt = time.Now()
	case <-time.After(*timeout):
		return fmt.Errorf("no POST /v1/workloads reached the leader in %s after %d acknowledgements", *timeout, *killAfter)
	}
	ackedAtKill := book.ackedSubmits()
	step("kill -9 %s (the leader) between its answer to a POST /v1/workloads and the client, %d submissions acknowledged",
		h.names[leader], ackedAtKill)
	newLeader, err := h.waitLeader(leader, *timeout)
	if err != nil {
		return err
	}
	takeover := time.Since(killedAt)
	step("%s leads %.1f s after the kill (rebuilt from the log before /readyz said 200)", h.names[newLeader], takeover.Seconds())
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	step("clients done: %d workloads submitted and acknowledged, %d finishes acknowledged", book.ackedSubmits(), book.finishes)

	// Every workload, through the Service (the new leader), in the state its last answer said.
	admitted := map[string]int{}
	var names []string
	for k := range book.state {
		names = append(names, k)
	}
	sort.Strings(names)
	checked := 0
	for _, key := range names {
		code, body, err := svc.Do("GET", "/v1/workloads/"+key, nil)
		if err != nil || code != 200 {
			return fmt.Errorf("GET /v1/workloads/%s on the new leader: HTTP %d %v: %.300s (an acknowledged workload was lost)", key, code, err, body)
		}
		var w struct {
			Workload struct {
				State  string `json:"state"`
				Tenant string `json:"tenant"`
			} `json:"workload"`
		}
		if err := json.Unmarshal(body, &w); err != nil {
			return fmt.Errorf("GET /v1/workloads/%s: %w", key, err)
		}
		want := book.state[key]
		ok := false
		switch want {
		case "pending": // a lost answer may have carried its admission
			ok = w.Workload.State == "pending" || w.Workload.State == "admitted"
		case "finish?": // a finish whose answer was lost
			ok = w.Workload.State == "admitted" || w.Workload.State == "finished"
		default:
			ok = w.Workload.State == want
		}
		if !ok {
			return fmt.Errorf("GET /v1/workloads/%s on the new leader: state %q, but the last acknowledgement said %q", key, w.Workload.State, want)
		}
		if w.Workload.State == "admitted" || w.Workload.State == "evicting" {
			admitted[w.Workload.Tenant] += gpus
		}
		checked++
	}
	for tenant, used := range admitted {
		if used > quota {
			return fmt.Errorf("tenant %s: %d GPUs admitted, over its quota of %d (double allocation)", tenant, used, quota)
		}
	}
	code, body, err := svc.Do("GET", "/v1/workloads/stats", nil)
	if err != nil || code != 200 {
		return fmt.Errorf("GET /v1/workloads/stats: HTTP %d %v", code, err)
	}
	var stats struct {
		Admitted int `json:"admitted"`
	}
	json.Unmarshal(body, &stats)
	if stats.Admitted != (admitted["team-a"]+admitted["team-b"])/gpus {
		return fmt.Errorf("the new leader's stats say %d admitted, its workloads %v GPUs: %s", stats.Admitted, admitted, body)
	}
	step("all %d workloads found on the new leader in their acknowledged state; admitted GPUs %v <= %d each",
		checked, admitted, quota)
	summary := map[string]any{"result": "pass", "workloads": checked, "acked_at_kill": ackedAtKill,
		"retried_requests": book.retries, "takeover_seconds": math.Round(takeover.Seconds()*10) / 10,
		"admitted_gpus": admitted, "seconds": math.Round(time.Since(t0).Seconds()*10) / 10}
	b, _ := json.Marshal(summary)
	fmt.Println(string(b))
	return nil
}

// admissionBook is what the clients were told: each workload's state by its last answer.
type admissionBook struct {
	mu       sync.Mutex
	state    map[string]string // ns/name -> pending | admitted | finished | finish? (no answer)
	acked    map[string]bool   // submissions answered 200
	retries  int
	finishes int
}

func (b *admissionBook) ackedSubmits() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.acked)
}

type admissionAnswer struct {
	Decisions []struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"decisions"`
	Workloads []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		State     string `json:"state"`
	} `json:"workloads"`
}

// apply records an answer's workload states and decisions. REQUIRES: b.mu held.
func (b *admissionBook) apply(a admissionAnswer) {
	for _, w := range a.Workloads {
		b.state[w.Namespace+"/"+w.Name] = w.State
	}
	for _, d := range a.Decisions {
		key := d.Namespace + "/" + d.Name
		switch d.Kind {
		case "admit":
			b.state[key] = "admitted"
		case "evict":
			b.state[key] = "evicting"
		}
	}
}

// client submits n workloads of `tenant` one per request (retrying each until it is answered
// 200, with the same uid), and after every third finishes the oldest it knows admitted (once: a
// finish without an answer is left as "finish?").
func (b *admissionBook) client(ctx context.Context, svc *seedance.Server, tenant string, n, gpus int,
	interval, timeout time.Duration, afterAck func()) error {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("job-%03d", i)
		key := tenant + "/" + name
		body, _ := json.Marshal(map[string]any{"workloads": []map[string]any{{"namespace": tenant, "name": name,
			"uid": "uid-" + tenant + "-" + name, "tenant": tenant, "request": map[string]any{"gpu": gpus}}}})
		deadline := time.Now().Add(timeout)
		for {
			code, resp, err := svc.Do("POST", "/v1/workloads", body)
			if err == nil && code == 200 {
				var a admissionAnswer
				if err := json.Unmarshal(resp, &a); err != nil {
					return fmt.Errorf("POST /v1/workloads %s: %w: %.300s", key, err, resp)
				}
				b.mu.Lock()
				b.apply(a)
				b.acked[key] = true
				b.mu.Unlock()
				break
			}
			if err == nil && code != http.StatusServiceUnavailable && code != http.StatusBadGateway {
				return fmt.Errorf("POST /v1/workloads %s: HTTP %d: %.300s", key, code, resp)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("POST /v1/workloads %s: no answer in %s (last HTTP %d %v)", key, timeout, code, err)
			}
			b.mu.Lock()
			b.retries++
			b.mu.Unlock()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		afterAck()
		if i%3 == 2 {
			b.mu.Lock()
			oldest := ""
			for j := 0; j <= i && oldest == ""; j++ {
				k := fmt.Sprintf("%s/job-%03d", tenant, j)
				if b.state[k] == "admitted" {
					oldest = k
				}
			}
			b.mu.Unlock()
			if oldest != "" {
				fb, _ := json.Marshal(map[string]any{"workloads": []string{oldest}})
				code, resp, err := svc.Do("POST", "/v1/workloads/finished", fb)
				b.mu.Lock()
				if err == nil && code == 200 {
					var a admissionAnswer
					json.Unmarshal(resp, &a)
					b.state[oldest] = "finished"
					b.apply(a)
					b.finishes++
				} else {
					b.state[oldest] = "finish?"
				}
				b.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
	return nil
}
