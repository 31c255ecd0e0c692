package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/workload"
)

// parity: the event list `seedance bench packing --replay` wrote (create/delete in the trace's
// time order, with the simulator's node per created pod) played through the real kube-apiserver
// and kube-scheduler (profile `seedance`: every node filtered, no score plugin but the extender's,
// percentageOfNodesToScore 100, the extender asked about every pod: no managedResources) with `seedance server --kubeconfig` as extender in node-cache mode
// binding through the API server, fed only by its watch. A create waits until the pod is bound or
// reported Unschedulable (an unschedulable pod is then deleted so that it is never retried, as
// the simulator drops it); a delete waits until Seedance (seedance_pods_bound) and kube-scheduler's
// cache have let the pod go. Every created pod's node must equal the simulator's.
func parity(ctx context.Context, args []string) error {
	fs := newFlags("parity")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	work := fs.String("work", "", "working directory (required; emptied first)")
	nodesCSV := fs.String("nodes", "", "openb node list (sn,cpu_milli,memory_mib,gpu,model) the replay used (required)")
	podsCSV := fs.String("pods", "", "openb pod list the replay used (required)")
	expected := fs.String("expected", "", "the replay's event,pod,node CSV (seedance bench packing --replay) (required)")
	policy := fs.String("policy", "seedance", "server.placement_policy (the replay's --policies)")
	seed := fs.Uint64("seed", 0, "server.seed (the replay's --seeds)")
	maxMismatch := fs.Int("max-mismatches", 10, "stop after this many mismatches")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for each event to settle")
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	sf := addShippedFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *bin == "" || *work == "" || *nodesCSV == "" || *podsCSV == "" || *expected == "" {
		return usagef("--seedance, --work, --nodes, --pods and --expected are required")
	}
	const ns = "openb"
	nodes, err := workload.ReadOpenbNodes(*nodesCSV)
	if err != nil {
		return usageError{err.Error()}
	}
	pods, err := workload.ReadOpenbPods(*podsCSV, ns)
	if err != nil {
		return usageError{err.Error()}
	}
	byName := map[string]workload.Pod{}
	for _, p := range pods {
		byName[p.Name] = p
	}
	events, err := readReplay(*expected, byName)
	if err != nil {
		return usageError{err.Error()}
	}
	step := func(format string, a ...any) { fmt.Printf("parity: "+format+"\n", a...) }

	deploy, err := sf.load()
	if err != nil {
		return err
	}
	if p, sd, err := shippedPolicy(deploy); err != nil {
		return usageError{err.Error()}
	} else if p != *policy || sd != *seed {
		return usagef("%s places with policy %s, seed %d: replay with those (got --policy %s --seed %d)", deploy.Path, p, sd, *policy, *seed)
	}

	t0 := time.Now()
	c, _, stopControlPlane, err := startControlPlane(ctx, *work, *verbose)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	if err := workload.CreateNodes(ctx, c.Client, nodes, 16); err != nil {
		return err
	}
	step("kube-apiserver %s with %d nodes in %.1f s", c.Server, len(nodes), time.Since(t0).Seconds())

	sh, err := startShipped(ctx, c, deploy, sf, *bin, *work, len(nodes), *timeout, nil, extenderScoreOnly, step)
	if err != nil {
		return err
	}
	defer sh.stop()
	srv, sched, probes401 := sh.srv, sh.sched, sh.probes401
	if err := workload.EnsureNamespaces(ctx, c.Client, pods[:1]); err != nil {
		return err
	}
	// Stopped before the API server (deferred later, runs first): an open watch delays its shutdown.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w, err := watchPods(wctx, c, ns)
	if err != nil {
		return err
	}
	step("seedance server --kubeconfig (policy %s, seed %d) and kube-scheduler `seedance` up in %.1f s; %d events",
		*policy, *seed, time.Since(t0).Seconds(), len(events))

	api := c.Client.CoreV1().Pods(ns)
	zero := int64(0)
	gone := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	res := parityResult{Nodes: len(nodes)}
	type mismatch struct{ Pod, Simulator, Kubernetes, Why string }
	var mismatches []mismatch
	bound := 0 // pods bound now
	// settled waits until Seedance and kube-scheduler both count `bound` pods.
	settled := func(what string) error {
		var sb float64
		var sc int
		err := seedance.Poll(ctx, *timeout, func() (bool, error) {
			var err error
			if sb, err = srv.Metric("seedance_pods_bound"); err != nil {
				return false, nil
			}
			sc, _ = sched.CachedPods()
			return int(sb) == bound && sc == bound, nil
		})
		if err != nil {
			return fmt.Errorf("%s: seedance_pods_bound %v, kube-scheduler's cache %d pods, want %d: %w", what, sb, sc, bound, err)
		}
		return nil
	}
	tPlay := time.Now()
	for k, e := range events {
		if e.create {
			if _, err := api.Create(ctx, workload.PodObject(byName[e.pod], sched.Name), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("event %d: create %s: %w", k+1, e.pod, err)
			}
			p, err := w.wait(ctx, e.pod, *timeout, func(p *corev1.Pod) bool { return p != nil && (p.Spec.NodeName != "" || workload.PodUnschedulable(p)) })
			if err != nil {
				return fmt.Errorf("event %d: pod %s neither bound nor unschedulable: %w", k+1, e.pod, err)
			}
			res.Compared++
			got := p.Spec.NodeName
			if got != "" {
				bound++
				res.Placed++
			} else {
				res.Unschedulable++
				if err := api.Delete(ctx, e.pod, gone); err != nil && !apierrors.IsNotFound(err) {
					return err
				}
				if _, err := w.wait(ctx, e.pod, *timeout, func(p *corev1.Pod) bool { return p == nil }); err != nil {
					return fmt.Errorf("event %d: unschedulable pod %s not deleted: %w", k+1, e.pod, err)
				}
			}
			if got != e.node {
				why := workload.PodScheduledMessage(p)
				if _, d, err := srv.Do("GET", "/v1/decisions?pod="+ns+"/"+e.pod, nil); err == nil {
					why = strings.TrimSpace(why + " seedance decisions: " + string(d))
				}
				mismatches = append(mismatches, mismatch{e.pod, e.node, got, why})
				step("MISMATCH event %d pod %s: simulator %q, kubernetes %q (%.1500s)", k+1, e.pod, e.node, got, why)
				if len(mismatches) >= *maxMismatch {
					break
				}
			}
		} else {
			if err := api.Delete(ctx, e.pod, gone); err != nil {
				return fmt.Errorf("event %d: delete %s: %w", k+1, e.pod, err)
			}
			if _, err := w.wait(ctx, e.pod, *timeout, func(p *corev1.Pod) bool { return p == nil }); err != nil {
				return fmt.Errorf("event %d: pod %s not gone: %w", k+1, e.pod, err)
			}
			res.Deleted++
			bound--
			if err := settled(fmt.Sprintf("event %d: delete %s", k+1, e.pod)); err != nil {
				return err
			}
		}
		if (k+1)%2000 == 0 {
			step("%d/%d events, %d pods compared, %d mismatches, %.0f s", k+1, len(events), res.Compared, len(mismatches), time.Since(tPlay).Seconds())
		}
	}
	if res.ExtenderFilters, res.Refused, err = checkNotBypassed(srv, res.Placed, probes401); err != nil {
		return err
	}
	res.Mismatches = len(mismatches)
	res.PlaySeconds = time.Since(tPlay).Seconds()
	res.WallSeconds = time.Since(t0).Seconds()
	if bound, err := srv.Metric("seedance_pods_bound"); err == nil {
		res.SeedanceBoundAtEnd = int(bound)
	}
	for i, m := range mismatches {
		if i < 10 {
			res.FirstMismatches = append(res.FirstMismatches, fmt.Sprintf("%s: simulator %q, kubernetes %q (%s)", m.Pod, m.Simulator, m.Kubernetes, m.Why))
		}
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	if len(mismatches) > 0 {
		return fmt.Errorf("%d of %d pods placed differently from the simulator (first: %s)", len(mismatches), res.Compared, res.FirstMismatches[0])
	}
	step("pass: %d pods compared (%d placed, %d unschedulable, %d deleted), 0 mismatches, %.1f s",
		res.Compared, res.Placed, res.Unschedulable, res.Deleted, res.WallSeconds)
	return nil
}

type parityResult struct {
	Result             string   `json:"result,omitempty"`
	Nodes              int      `json:"nodes"`
	Compared           int      `json:"pods_compared"`
	Placed             int      `json:"placed"`
	Unschedulable      int      `json:"unschedulable"`
	Deleted            int      `json:"deleted"`
	Mismatches         int      `json:"mismatches"`
	FirstMismatches    []string `json:"first_mismatches,omitempty"`
	SeedanceBoundAtEnd int      `json:"seedance_pods_bound_at_end"`
	ExtenderFilters    int      `json:"extender_filters_answered,omitempty"` // as shipped: filter answered 200
	Refused            int      `json:"extender_refused_401,omitempty"`
	PlaySeconds        float64  `json:"play_seconds"`
	WallSeconds        float64  `json:"wall_seconds"`
}

type replayEvent struct {
	create bool
	pod    string
	node   string
}

// readReplay reads `event,pod,node` rows; every pod must be in pods.
func readReplay(path string, pods map[string]workload.Pod) ([]replayEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = 3
	head, err := r.Read()
	if err != nil || strings.Join(head, ",") != "event,pod,node" {
		return nil, fmt.Errorf("%s:1: header must be event,pod,node (seedance bench packing --replay), got %v %v", path, head, err)
	}
	var out []replayEvent
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		line, _ := r.FieldPos(0)
		if rec[0] != "create" && rec[0] != "delete" {
			return nil, fmt.Errorf("%s:%d:event: %q is not create or delete", path, line, rec[0])
		}
		if _, ok := pods[rec[1]]; !ok {
			return nil, fmt.Errorf("%s:%d:pod: %q is not in the pod list", path, line, rec[1])
		}
		out = append(out, replayEvent{create: rec[0] == "create", pod: rec[1], node: rec[2]})
	}
	return out, nil
}

// podWatch is an informer's view of one namespace's pods with a broadcast on every change.
type podWatch struct {
	mu      sync.Mutex
	pods    map[string]*corev1.Pod
	changed chan struct{}
}

func watchPods(ctx context.Context, c *cluster.Cluster, ns string) (*podWatch, error) {
	w := &podWatch{pods: map[string]*corev1.Pod{}, changed: make(chan struct{})}
	set := func(p *corev1.Pod, deleted bool) {
		w.mu.Lock()
		if deleted {
			delete(w.pods, p.Name)
		} else {
			w.pods[p.Name] = p
		}
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o interface{}) { set(o.(*corev1.Pod), false) },
		UpdateFunc: func(_, o interface{}) { set(o.(*corev1.Pod), false) },
		DeleteFunc: func(o interface{}) {
			if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = t.Obj
			}
			if p, ok := o.(*corev1.Pod); ok {
				set(p, true)
			}
		},
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("pod informer did not sync")
	}
	return w, nil
}

// wait blocks until cond holds for the pod (nil: not there) and returns it.
func (w *podWatch) wait(ctx context.Context, name string, timeout time.Duration, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	deadline := time.After(timeout)
	for {
		w.mu.Lock()
		p := w.pods[name]
		ch := w.changed
		w.mu.Unlock()
		if cond(p) {
			return p, nil
		}
		select {
		case <-ch:
		case <-deadline:
			return p, fmt.Errorf("timeout after %s", timeout)
		case <-ctx.Done():
			return p, ctx.Err()
		}
	}
}
