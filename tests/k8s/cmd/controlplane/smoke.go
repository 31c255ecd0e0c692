package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/workload"
)

func metav1ListAll() metav1.ListOptions { return metav1.ListOptions{} }

// smoke: deploy/ as rendered (`kubectl kustomize deploy/`: the server, its RBAC, the StatefulSet's
// args with mutual TLS) on a real kube-apiserver (RBAC, default admission plugins), and the
// cluster's own kube-scheduler (profile default-scheduler) run with the file deploy/ ships for it,
// deploy/kube-scheduler-config.yaml (--scheduler-config): node-cache, ignorable (fail open),
// managedResources nvidia.com/gpu, no bindVerb (kube-scheduler binds). The server learns nodes and
// pods only from its watch, as ServiceAccount seedance. Tenant team-a has a quota of 8 GPUs (the
// one edit of the ConfigMap's file). Checks:
//  1. /readyz turns 200 and GET /v1/cluster lists both nodes, from the watch alone; a filter
//     without a client certificate is refused (401);
//  2. an 8-GPU pod (team-a) is bound to gpu-a, the only 8-GPU node, after Seedance's filter
//     answered kube-scheduler over mutual TLS, and GET /v1/cluster shows its 8 GPUs and team-a's
//     quota use (learnt from the watch: kube-scheduler binds);
//  3. a 4-GPU pod of team-a fits gpu-b by kube-scheduler's own rules but not team-a's quota: it
//     stays Pending with Seedance's `quota:` reason;
//  4. deleting the 8-GPU pod frees its GPUs and quota in GET /v1/cluster (the watch's DELETED), and
//     kube-scheduler then binds the 4-GPU pod through Seedance's filter;
//  5. managedResources: a CPU-only pod is bound without Seedance being asked (filter count
//     unchanged);
//  6. fail open (ignorable: true): with the server killed (kill -9), a 1-GPU pod is still bound by
//     kube-scheduler, which logs "Skipping extender as it returned error" for that pod; the server
//     restarted on its ledger learns that pod from its watch (/v1/cluster: team-a's quota use
//     includes it) and answers kube-scheduler's filter again.
func smoke(ctx context.Context, args []string) error {
	fs := newFlags("smoke")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	work := fs.String("work", "", "working directory (required; emptied first)")
	sf := addShippedFlags(fs)
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	timeout := fs.Duration("timeout", 60*time.Second, "how long to wait for each condition")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *bin == "" || *work == "" {
		return usagef("--seedance and --work are required")
	}
	if _, err := os.Stat(*bin); err != nil {
		return usagef("--seedance: %v", err)
	}
	d, err := sf.load()
	if err != nil {
		return err
	}
	step, t0 := stepLog("smoke")
	c, tap, stopControlPlane, err := startControlPlane(ctx, *work, *verbose)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	const skipping = "Skipping extender as it returned error"
	tap.watch(skipping)
	step("kube-apiserver %s up (RBAC, default admission plugins)", c.Server)

	nodes := []workload.Node{
		{Name: "gpu-a", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
		{Name: "gpu-b", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("4"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
	}
	if err := workload.CreateNodes(ctx, c.Client, nodes, 2); err != nil {
		return err
	}
	quota := addTenants(d, "    - {name: team-a, tier: gold, quota: {gpu: {nominal: 8}}}\n", nil)
	a, err := startShipped(ctx, c, d, sf, *bin, *work, len(nodes), *timeout, quota, nil, step)
	if err != nil {
		return err
	}
	defer func() { a.stop() }()
	srv, sched := a.srv, a.sched
	st, err := srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool { return len(s.Nodes) == 2 })
	if err != nil || st.Nodes["gpu-a"].GPUs != 8 || st.Nodes["gpu-b"].GPUs != 4 {
		return fmt.Errorf("GET /v1/cluster nodes = %+v (%v), want gpu-a 8 GPUs, gpu-b 4, from the watch", st.Nodes, err)
	}
	step("seedance server %s: ready, 2 nodes from its watch; kube-scheduler %q with %s", srv.URL, sched.Name, *sf.schedulerConfig)

	filters := func() float64 {
		v, _ := srv.MetricSum("seedance_http_requests_total", map[string]string{"path": "/extender/filter", "code": "200"})
		return v
	}
	pods := []workload.Pod{
		{Name: "train-1", Namespace: "team-a", CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPU: resource.MustParse("8"), Tenant: "team-a"},
		{Name: "train-2", Namespace: "team-a", CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPU: resource.MustParse("4"), Tenant: "team-a"},
		{Name: "cpu-1", Namespace: "team-a", CPU: resource.MustParse("4"), Memory: resource.MustParse("8Gi"), GPU: resource.MustParse("0"), Tenant: "team-a"},
		{Name: "failopen-1", Namespace: "team-a", CPU: resource.MustParse("2"), Memory: resource.MustParse("8Gi"), GPU: resource.MustParse("1"), Tenant: "team-a"},
	}
	if err := workload.EnsureNamespaces(ctx, c.Client, pods); err != nil {
		return err
	}
	api := c.Client.CoreV1().Pods("team-a")
	create := func(p workload.Pod) error {
		_, err := api.Create(ctx, workload.PodObject(p, sched.Name), metav1.CreateOptions{})
		return err
	}
	bound := func(name string) (*corev1.Pod, error) {
		p, err := waitPod(ctx, c.Client, "team-a", name, *timeout, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
		if err != nil {
			return p, fmt.Errorf("%s was not bound: %w (PodScheduled: %q)", name, err, workload.PodScheduledMessage(p))
		}
		return p, nil
	}

	f0 := filters()
	if err := create(pods[0]); err != nil {
		return err
	}
	p1, err := bound("train-1")
	if err != nil {
		return err
	}
	if p1.Spec.NodeName != "gpu-a" {
		return fmt.Errorf("train-1 bound to %s, want gpu-a (the only node with 8 GPUs)", p1.Spec.NodeName)
	}
	if f := filters(); f <= f0 {
		return fmt.Errorf("train-1 bound without Seedance's filter answering (filters %v -> %v): kube-scheduler failed open (mutual TLS? %v)",
			f0, f, tap.matching(skipping))
	}
	st, err = srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool {
		return s.Pods["team-a/train-1"].Node == "gpu-a" && s.Nodes["gpu-a"].GPUMilliUsed == 8000 && s.Quota["team-a"]["gpu"] == 8000
	})
	if err != nil {
		return fmt.Errorf("GET /v1/cluster after train-1's bind: want it on gpu-a with 8000 milli-GPU used and team-a's gpu quota use 8000: %w (%+v)", err, *st)
	}
	step("train-1 (8 GPU) bound to gpu-a after Seedance's filter; /v1/cluster: gpu-a 8000 milli-GPU used, team-a quota 8000")

	if err := create(pods[1]); err != nil {
		return err
	}
	p2, err := waitPod(ctx, c.Client, "team-a", "train-2", *timeout, func(p *corev1.Pod) bool {
		return strings.Contains(workload.PodScheduledMessage(p), "quota:")
	})
	if err != nil {
		return fmt.Errorf("train-2: want Pending with seedance's `quota:` reason: %w (nodeName %q, PodScheduled: %q)",
			err, p2.Spec.NodeName, workload.PodScheduledMessage(p2))
	}
	if p2.Spec.NodeName != "" {
		return fmt.Errorf("train-2 bound to %s, want Pending", p2.Spec.NodeName)
	}
	pending := workload.PodScheduledMessage(p2)
	step("train-2 (4 GPU) Pending: %s", pending)

	zero := int64(0)
	if err := api.Delete(ctx, "train-1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		return err
	}
	st, err = srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool {
		_, still := s.Pods["team-a/train-1"]
		return !still && s.Nodes["gpu-a"].GPUMilliUsed == 0
	})
	if err != nil {
		return fmt.Errorf("GET /v1/cluster after deleting train-1: want it gone and gpu-a's GPUs free: %w (%+v)", err, *st)
	}
	step("train-1 deleted: /v1/cluster shows gpu-a's 8 GPUs free")
	if p2, err = bound("train-2"); err != nil {
		return fmt.Errorf("after train-1 freed team-a's quota: %w", err)
	}
	st, err = srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool {
		return s.Pods["team-a/train-2"].Node == p2.Spec.NodeName && s.Quota["team-a"]["gpu"] == 4000
	})
	if err != nil {
		return fmt.Errorf("GET /v1/cluster after train-2's bind: want it on %s and team-a's quota use 4000: %w (%+v)", p2.Spec.NodeName, err, *st)
	}
	step("train-2 then bound to %s; team-a quota 4000", p2.Spec.NodeName)

	// managedResources [nvidia.com/gpu]: a pod without a GPU request is kube-scheduler's alone.
	f1 := filters()
	if err := create(pods[2]); err != nil {
		return err
	}
	if _, err := bound("cpu-1"); err != nil {
		return err
	}
	if _, err := srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool { return s.Pods["team-a/cpu-1"].Node != "" }); err != nil {
		return fmt.Errorf("GET /v1/cluster: cpu-1 not learnt from the watch: %w", err)
	}
	if f := filters(); f != f1 {
		return fmt.Errorf("cpu-1 (no nvidia.com/gpu) went through Seedance's filter (%v -> %v): managedResources not applied", f1, f)
	}
	step("cpu-1 (no GPU) bound without asking Seedance (managedResources nvidia.com/gpu)")

	// Fail open: the extender gone, GPU pods are still scheduled, loudly.
	srv.Kill()
	step("kill -9 seedance server")
	if err := create(pods[3]); err != nil {
		return err
	}
	p4, err := bound("failopen-1")
	if err != nil {
		return fmt.Errorf("with Seedance down, want fail open (deploy/'s ignorable: true): %w", err)
	}
	var loud []string
	waitFor(ctx, 5*time.Second, func() bool { loud = tap.matching(skipping, `pod="team-a/failopen-1"`); return len(loud) > 0 })
	if len(loud) == 0 {
		return fmt.Errorf("failopen-1 bound to %s with Seedance down, but kube-scheduler logged no %q for it", p4.Spec.NodeName, skipping)
	}
	step("failopen-1 (1 GPU) bound to %s by kube-scheduler alone; its log: %.200s", p4.Spec.NodeName, loud[0])
	if a.srv, err = a.env.startServer(ctx, *bin, filepath.Join(*work, "seedance"), 0, quota); err != nil {
		return err
	}
	srv = a.srv
	if err := srv.WaitReady(ctx, *timeout); err != nil {
		return err
	}
	st, err = srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool {
		return s.Pods["team-a/failopen-1"].Node == p4.Spec.NodeName && s.Quota["team-a"]["gpu"] == 5000
	})
	if err != nil {
		return fmt.Errorf("GET /v1/cluster after the restart: want failopen-1 on %s and team-a's quota use 5000: %w (%+v)", p4.Spec.NodeName, err, *st)
	}
	step("seedance restarted: failopen-1 learnt from the watch, team-a quota 5000")

	summary := map[string]any{"result": "pass", "server": c.Server, "seedance": srv.URL, "train-1": p1.Spec.NodeName,
		"train-2-pending": pending, "train-2": p2.Spec.NodeName, "failopen-1": p4.Spec.NodeName,
		"seconds": math.Round(time.Since(t0).Seconds()*10) / 10}
	b, _ := json.Marshal(summary)
	fmt.Println(string(b))
	return nil
}

// boundBySeedance checks the server's decision log: the pod is bound to node through its bind verb.
func boundBySeedance(srv *seedance.Server, key, node string) error {
	code, body, err := srv.Do("GET", "/v1/decisions?pod="+key, nil)
	if err != nil || code != 200 {
		return fmt.Errorf("GET /v1/decisions?pod=%s: HTTP %d %v: %.300s", key, code, err, body)
	}
	var d struct {
		BoundTo   string `json:"bound_to"`
		Decisions []struct {
			Verb   string `json:"verb"`
			Chosen string `json:"chosen"`
			Error  string `json:"error"`
		} `json:"decisions"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		return fmt.Errorf("GET /v1/decisions?pod=%s: %v", key, err)
	}
	for _, x := range d.Decisions {
		if x.Verb == "bind" && x.Chosen == node && x.Error == "" && d.BoundTo == node {
			return nil
		}
	}
	return fmt.Errorf("%s: no successful bind to %s in seedance's decision log: %.500s", key, node, body)
}

// waitPod polls the pod until cond holds; it returns the last pod seen either way.
func waitPod(ctx context.Context, c kubernetes.Interface, ns, name string, timeout time.Duration, cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	last := &corev1.Pod{}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = p
		return cond(p), nil
	})
	return last, err
}
