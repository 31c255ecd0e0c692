package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/workload"
)

func metav1ListAll() metav1.ListOptions { return metav1.ListOptions{} }

// smoke: real kube-apiserver + real kube-scheduler (second scheduler `seedance`) with `seedance
// server --kubeconfig` as its extender in node-cache mode, binding through the API server. The
// server learns nodes and pods only from its watch (no POST /v1/nodes). Tenant team-a has a quota
// of 8 GPUs. Checks:
//  1. /readyz turns 200 and GET /v1/cluster lists both nodes, from the watch alone;
//  2. an 8-GPU pod (team-a) is bound to gpu-a, the only 8-GPU node, by Seedance's bind (its
//     decision log records the bind), and GET /v1/cluster shows its 8 GPUs and team-a's quota use;
//  3. a 4-GPU pod of team-a fits gpu-b by kube-scheduler's own rules but not team-a's quota: it
//     stays Pending with Seedance's `quota:` reason;
//  4. deleting the 8-GPU pod frees its GPUs and quota in GET /v1/cluster (the watch's DELETED), and
//     kube-scheduler then binds the 4-GPU pod through Seedance.
func smoke(ctx context.Context, args []string) error {
	fs := newFlags("smoke")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	work := fs.String("work", "", "working directory (required; emptied first)")
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
	step := func(format string, a ...any) { fmt.Printf("smoke: "+format+"\n", a...) }

	t0 := time.Now()
	c, stopControlPlane, err := startControlPlane(ctx, *work, *verbose)
	if err != nil {
		return err
	}
	defer stopControlPlane()
	step("kube-apiserver %s up in %.1f s", c.Server, time.Since(t0).Seconds())

	nodes := []workload.Node{
		{Name: "gpu-a", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
		{Name: "gpu-b", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("4"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
	}
	if err := workload.CreateNodes(ctx, c.Client, nodes, 2); err != nil {
		return err
	}

	cfg := filepath.Join(*work, "seedance-config.yaml")
	if err := seedance.ConfigForAPIServer(cfg, c.Server, c.TokenFile, c.CAFile,
		"tenancy:\n  tenants:\n    - {name: team-a, tier: gold, quota: {gpu: {nominal: 8}}}\n"); err != nil {
		return err
	}
	srv, err := seedance.Start(ctx, *bin, filepath.Join(*work, "seedance"), cfg, "--kubeconfig", c.Kubeconfig)
	if err != nil {
		return err
	}
	defer srv.Stop()
	if err := srv.WaitReady(ctx, *timeout); err != nil {
		return err
	}
	st, err := srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool { return len(s.Nodes) == 2 })
	if err != nil {
		return fmt.Errorf("GET /v1/cluster: want gpu-a and gpu-b from the watch: %w (nodes: %v)", err, st.Nodes)
	}
	if st.Nodes["gpu-a"].GPUs != 8 || st.Nodes["gpu-b"].GPUs != 4 {
		return fmt.Errorf("GET /v1/cluster nodes = %+v, want gpu-a 8 GPUs, gpu-b 4", st.Nodes)
	}
	step("seedance server %s --kubeconfig: ready, 2 nodes from the watch", srv.URL)

	sched, err := c.StartScheduler(ctx, cluster.SchedulerOptions{Name: "seedance", ExtenderURL: srv.URL + "/extender",
		NodeCache: true, Bind: true})
	if err != nil {
		return err
	}
	defer sched.Stop()
	step("kube-scheduler `seedance` with the extender (node-cache, bindVerb) up")

	pods := []workload.Pod{
		{Name: "train-1", Namespace: "team-a", CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPU: resource.MustParse("8")},
		{Name: "train-2", Namespace: "team-a", CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPU: resource.MustParse("4")},
	}
	if err := workload.EnsureNamespaces(ctx, c.Client, pods); err != nil {
		return err
	}
	api := c.Client.CoreV1().Pods("team-a")
	if _, err := api.Create(ctx, workload.PodObject(pods[0], "seedance"), metav1.CreateOptions{}); err != nil {
		return err
	}
	p1, err := waitPod(ctx, c.Client, "team-a", "train-1", *timeout, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if err != nil {
		return fmt.Errorf("train-1 was not bound: %w (PodScheduled: %q)", err, workload.PodScheduledMessage(p1))
	}
	if p1.Spec.NodeName != "gpu-a" {
		return fmt.Errorf("train-1 bound to %s, want gpu-a (the only node with 8 GPUs)", p1.Spec.NodeName)
	}
	if err := boundBySeedance(srv, "team-a/train-1", "gpu-a"); err != nil {
		return err
	}
	st, err = srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool {
		return s.Pods["team-a/train-1"].Node == "gpu-a" && s.Nodes["gpu-a"].GPUMilliUsed == 8000 && s.Quota["team-a"]["gpu"] == 8000
	})
	if err != nil {
		return fmt.Errorf("GET /v1/cluster after train-1's bind: want it on gpu-a with 8000 milli-GPU used and team-a's gpu quota use 8000: %w (%+v)", err, *st)
	}
	step("train-1 (8 GPU) bound to gpu-a by seedance's bind; /v1/cluster: gpu-a 8000 milli-GPU used, team-a quota 8000")

	if _, err := api.Create(ctx, workload.PodObject(pods[1], "seedance"), metav1.CreateOptions{}); err != nil {
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
	p2, err = waitPod(ctx, c.Client, "team-a", "train-2", *timeout, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if err != nil {
		return fmt.Errorf("train-2 was not bound after train-1 freed team-a's quota: %w (PodScheduled: %q)", err, workload.PodScheduledMessage(p2))
	}
	if err := boundBySeedance(srv, "team-a/train-2", p2.Spec.NodeName); err != nil {
		return err
	}
	st, err = srv.WaitCluster(ctx, *timeout, func(s *seedance.ClusterState) bool {
		return s.Pods["team-a/train-2"].Node == p2.Spec.NodeName && s.Quota["team-a"]["gpu"] == 4000
	})
	if err != nil {
		return fmt.Errorf("GET /v1/cluster after train-2's bind: want it on %s and team-a's quota use 4000: %w (%+v)", p2.Spec.NodeName, err, *st)
	}
	step("train-2 then bound to %s by seedance's bind; team-a quota 4000", p2.Spec.NodeName)

	summary := map[string]any{"result": "pass", "server": c.Server, "seedance": srv.URL, "train-1": p1.Spec.NodeName,
		"train-2-pending": pending, "train-2": p2.Spec.NodeName, "seconds": time.Since(t0).Seconds()}
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
