package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/shipped"
	"seedance.dev/tests/k8s/internal/workload"
)

// throughput: kube-scheduler's scheduling throughput (pods bound per second, from the first pod
// created to the last binding seen by a watch) on one control plane (RBAC, default admission
// plugins) with deploy/ as rendered, first without the extender, then with it: the render's
// kube-scheduler configuration (deploy/second-scheduler: profile seedance, no managedResources,
// so GPU-share and CPU-only pods go through Seedance too; node-cache; ignorable; no bindVerb) under
// its ServiceAccount, and the StatefulSet's `seedance server` (mutual TLS, fed by its watch as
// ServiceAccount seedance). The first run is the same configuration with the extender removed.
// Both runs raise kube-scheduler's client QPS and burst to 5000 (its defaults, 50 and 100, would
// make the API client the limit of both). The same nodes serve both runs; the first run's pods are
// deleted (grace period 0) before the second starts. A run ends when every pod is bound or was
// reported Unschedulable (counted apart: a spreading scheduler leaves no room for some 8-GPU pods
// of openb). With the extender, every bound pod must have had Seedance's filter answered
// (ignorable: true would otherwise hide a bypass) and Seedance's watch must count them all.
func throughput(ctx context.Context, args []string) error {
	fs := newFlags("throughput")
	bin := fs.String("seedance", "", "the seedance binary (required for the extender run)")
	work := fs.String("work", "", "working directory (required; emptied first)")
	nNodes := fs.Int("nodes", 100, "synthetic nodes (8 GPUs each), unless --nodes-csv")
	nPods := fs.Int("pods", 400, "synthetic one-GPU pods per run, unless --pods-csv")
	nodesCSV := fs.String("nodes-csv", "", "nodes.csv: name,cpu,memory,gpu[,gpu_model]")
	podsCSV := fs.String("pods-csv", "", "pods.csv: name,namespace,cpu,memory,gpu[,...] (the namespace is replaced per run)")
	openbNodes := fs.String("openb-nodes", "", "nodes from an openb node list (data/openb/openb_node_list_gpu_node.csv)")
	openbPods := fs.String("openb-pods", "", "pods from an openb pod list (data/openb/openb_pod_list_default.csv), in trace order")
	limit := fs.Int("pods-limit", 0, "use the first N pods only (0: all)")
	workers := fs.Int("workers", 16, "API requests in flight when creating")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for every pod of a run to be bound")
	skipPlain := fs.Bool("skip-plain", false, "run only the extender run")
	nullRun := fs.Bool("null-extender", false, "a third run between the two: the shipped scheduler config calling the null extender "+
		"(mutual TLS, node-cache, answers the first candidate, no decision and no watch): what the extender protocol alone costs")
	noBatching := fs.Bool("no-batching", false, "a run of kube-scheduler alone with its OpportunisticBatching feature gate off (KEP-5598; "+
		"kube-scheduler turns batching off in any profile with an extender): the most any extender's run can reach")
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	sf := addShippedFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *work == "" || *bin == "" {
		return usagef("--seedance and --work are required")
	}
	deploy, err := sf.load()
	if err != nil {
		return err
	}
	nodes, pods := workload.Synthetic(*nNodes, *nPods, "")
	if *nodesCSV != "" {
		if nodes, err = workload.ReadNodes(*nodesCSV); err != nil {
			return usageError{err.Error()}
		}
	}
	if *podsCSV != "" {
		if pods, err = workload.ReadPods(*podsCSV); err != nil {
			return usageError{err.Error()}
		}
	}
	if *openbNodes != "" {
		if nodes, err = workload.ReadOpenbNodes(*openbNodes); err != nil {
			return usageError{err.Error()}
		}
	}
	if *openbPods != "" {
		if pods, err = workload.ReadOpenbPods(*openbPods, "openb"); err != nil {
			return usageError{err.Error()}
		}
	}
	if *limit > 0 && *limit < len(pods) {
		pods = pods[:*limit]
	}
	inNamespace := func(ns string) []workload.Pod {
		out := make([]workload.Pod, len(pods))
		for i, p := range pods {
			p.Namespace = ns
			out[i] = p
		}
		return out
	}
	c, _, stopControlPlane, err := startControlPlane(ctx, *work, *verbose)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	if err := workload.CreateNodes(ctx, c.Client, nodes, *workers); err != nil {
		return err
	}
	step, _ := stepLog("throughput")
	env, err := applyShipped(ctx, c, deploy, sf, *work, step)
	if err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	var results []*workload.Result

	// runAlone is a run of kube-scheduler without the extender (gates: feature gates set for it).
	runAlone := func(run, ns string, gates map[string]bool, note string) error {
		s, err := env.startSchedulerGates(ctx, "https://127.0.0.1:1", gates, func(d *shipped.Deploy, cfg map[string]any) {
			fastClient(d, cfg)
			delete(cfg, "extenders")
			d.Note("%s", note)
		})
		if err != nil {
			return err
		}
		before := takeSnapshot(nil)
		stopProfile := startCPUProfile(run)
		res, err := workload.RunPodsUntilDecided(ctx, c.Client, inNamespace(ns), s.Name, *workers, *timeout)
		stopProfile()
		after := takeSnapshot(nil)
		s.Stop()
		if res != nil {
			res.Nodes = len(nodes)
			if run != "plain" {
				res.Scheduler = run
			}
			out.Encode(res)
			printCycleProfile(run, before, after, res.Bound)
		}
		if err != nil {
			return fmt.Errorf("without extender (%s): %w", run, err)
		}
		results = append(results, res)
		return deleteAllPods(ctx, c, ns)
	}
	if !*skipPlain {
		if err := runAlone("plain", "bench-plain", nil,
			"kube-scheduler (throughput's first run): the extender removed, kube-scheduler alone"); err != nil {
			return err
		}
	}
	if *noBatching {
		if err := runAlone(noBatchingRunName, "bench-nobatch", map[string]bool{"OpportunisticBatching": false},
			"kube-scheduler (throughput's no-batching run): the extender removed and feature gate OpportunisticBatching=false, "+
				"as kube-scheduler runs every profile that has an extender (framework.go computeBatchablePlugins)"); err != nil {
			return err
		}
	}

	if *nullRun {
		res, err := runNullExtender(ctx, c, env, inNamespace("bench-null"), *workers, *timeout)
		if res != nil {
			res.Nodes = len(nodes)
			out.Encode(res)
			results = append(results, res)
		}
		if err != nil {
			return err
		}
	}

	srv, err := env.startServer(ctx, *bin, filepath.Join(*work, "seedance"), 0, nil)
	if err != nil {
		return err
	}
	defer srv.Stop()
	if err := srv.WaitReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	probes401, err := probeAnonymous(srv)
	if err != nil {
		return err
	}
	if st, err := srv.WaitCluster(ctx, 2*time.Minute, func(s *seedance.ClusterState) bool { return len(s.Nodes) == len(nodes) }); err != nil {
		return fmt.Errorf("seedance's watch: %d of %d nodes: %w", len(st.Nodes), len(nodes), err)
	}
	s, err := env.startScheduler(ctx, srv.URL, fastClient)
	if err != nil {
		return err
	}
	for _, ch := range deploy.Changes {
		step("as shipped, except: %s", ch)
	}
	before := takeSnapshot(srv)
	stopProfile := startCPUProfile("seedance")
	res, err := workload.RunPodsUntilDecided(ctx, c.Client, inNamespace("bench-seedance"), s.Name, *workers, *timeout)
	stopProfile()
	after := takeSnapshot(srv)
	s.Stop()
	if res != nil {
		res.Nodes, res.Extender = len(nodes), true
		out.Encode(res)
		printCycleProfile("seedance", before, after, res.Bound)
	}
	if err != nil {
		return fmt.Errorf("with the extender: %w", err)
	}
	if _, _, err := checkNotBypassed(srv, res.Bound, probes401); err != nil {
		return err
	}
	var learnt float64
	if err := seedance.Poll(ctx, time.Minute, func() (bool, error) {
		learnt, _ = srv.Metric("seedance_pods_bound")
		return int(learnt) == res.Bound, nil
	}); err != nil {
		return fmt.Errorf("seedance_pods_bound = %v, want %d: Seedance's watch missed bound pods: %w", learnt, res.Bound, err)
	}
	results = append(results, res)
	for _, r := range results {
		if r.Scheduler == noBatchingRunName {
			fmt.Printf("throughput: %-17s no batching:    %d nodes, %d pods bound, %d unschedulable: %.1f pods/s (%.2f s; creating took %.2f s)\n",
				r.Scheduler, r.Nodes, r.Bound, r.Unschedulable, r.PodsPerSecond, r.TotalSeconds, r.CreateSeconds)
			continue
		}
		if r.Scheduler == nullRunName {
			fmt.Printf("throughput: %-17s null extender:  %d nodes, %d pods bound, %d unschedulable: %.1f pods/s (%.2f s; creating took %.2f s)\n",
				r.Scheduler, r.Nodes, r.Bound, r.Unschedulable, r.PodsPerSecond, r.TotalSeconds, r.CreateSeconds)
			continue
		}
		fmt.Printf("throughput: %-17s extender=%-5t %d nodes, %d pods bound, %d unschedulable: %.1f pods/s (%.2f s; creating took %.2f s)\n",
			r.Scheduler, r.Extender, r.Nodes, r.Bound, r.Unschedulable, r.PodsPerSecond, r.TotalSeconds, r.CreateSeconds)
	}
	return nil
}

// fastClient is throughput's change to the shipped scheduler config, in both runs: the API client
// is not the limit.
func fastClient(d *shipped.Deploy, cfg map[string]any) {
	cc, _ := cfg["clientConnection"].(map[string]any)
	cc["qps"], cc["burst"] = 5000, 5000
	d.Note("kube-scheduler (throughput): clientConnection qps and burst 5000 (defaults 50 and 100 would cap both runs at the API client)")
}

// deleteAllPods deletes every pod in ns with grace period 0 (no kubelet runs here to confirm a
// graceful stop) and waits until the namespace has none.
func deleteAllPods(ctx context.Context, c *cluster.Cluster, ns string) error {
	zero := int64(0)
	pods := c.Client.CoreV1().Pods(ns)
	// A collection of 8,000 pods can outlast the API server's 60 s request timeout on a loaded
	// machine, which stops the deletion where it got (a timeout, or the HTTP/2 stream reset): it
	// is asked again until no pod is left, for at most 10 minutes.
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := pods.DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
			last = err
		}
		l, err := pods.List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("delete pods in %s: %w (last deletion error: %v)", ns, err, last)
	}
	return nil
}

// nullRunName labels the null extender's run in the summary (the scheduler's name is the same).
const nullRunName = "null-extender"

// noBatchingRunName labels the run of kube-scheduler alone without opportunistic batching.
const noBatchingRunName = "alone-no-batching"

// runNullExtender is throughput's ablation run: the shipped scheduler configuration with its
// extender at the null extender (null_extender.go); its pods are deleted afterwards.
func runNullExtender(ctx context.Context, c *cluster.Cluster, env *shippedEnv, pods []workload.Pod, workers int,
	timeout time.Duration) (*workload.Result, error) {
	nx, err := startNullExtender(env.certs)
	if err != nil {
		return nil, err
	}
	defer nx.Stop()
	s, err := env.startScheduler(ctx, nx.URL, func(d *shipped.Deploy, cfg map[string]any) {
		fastClient(d, cfg)
		d.Note("kube-scheduler (throughput's null-extender run): the shipped extender entry pointed at the null extender")
	})
	if err != nil {
		return nil, err
	}
	before := takeSnapshot(nil)
	stopProfile := startCPUProfile("null")
	res, err := workload.RunPodsUntilDecided(ctx, c.Client, pods, s.Name, workers, timeout)
	stopProfile()
	after := takeSnapshot(nil)
	s.Stop()
	if res != nil {
		res.Extender = true
		printCycleProfile("null", before, after, res.Bound)
		if got := int(nx.filters.Load()); got < res.Bound {
			return res, fmt.Errorf("null extender: %d filters answered for %d pods bound: kube-scheduler bypassed it", got, res.Bound)
		}
		res.Scheduler = nullRunName
	}
	if err != nil {
		return res, fmt.Errorf("with the null extender: %w", err)
	}
	if len(pods) > 0 {
		if err := deleteAllPods(ctx, c, pods[0].Namespace); err != nil {
			return res, err
		}
	}
	return res, nil
}
