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
// server` as its extender in node-cache mode, binding through the API server. Nodes reach the
// server by POST /v1/nodes. Checks:
//  1. an 8-GPU pod fits two nodes by kube-scheduler's own rules (gpu-a, gpu-c) but only gpu-a was
//     registered with Seedance: it is bound to gpu-a, by Seedance's bind (its metrics count it);
//  2. a second 8-GPU pod fits only gpu-c by kube-scheduler's rules: Seedance answers "unknown
//     node" and the pod stays Pending with that reason.
func smoke(ctx context.Context, args []string) error {
	fs := newFlags("smoke")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	work := fs.String("work", "", "working directory (required; emptied first)")
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	timeout := fs.Duration("timeout", 120*time.Second, "how long to wait for each condition")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *bin == "" || *work == "" {
		return usagef("--seedance and --work are required")
	}
	if _, err := os.Stat(*bin); err != nil {
		return usagef("--seedance: %v", err)
	}
	os.RemoveAll(*work)
	logw, closeLog, err := logSink(*work, *verbose)
	if err != nil {
		return err
	}
	defer closeLog()
	step := func(format string, a ...any) { fmt.Printf("smoke: "+format+"\n", a...) }

	t0 := time.Now()
	c, err := cluster.Start(ctx, cluster.Options{Dir: filepath.Join(*work, "cp"), Log: logw})
	if err != nil {
		return err
	}
	defer c.Stop()
	step("kube-apiserver %s up in %.1f s", c.Server, time.Since(t0).Seconds())

	cfg := filepath.Join(*work, "seedance-config.yaml")
	if err := seedance.ConfigForAPIServer(cfg, c.Server, c.TokenFile, c.CAFile); err != nil {
		return err
	}
	srv, err := seedance.Start(ctx, *bin, filepath.Join(*work, "seedance"), cfg)
	if err != nil {
		return err
	}
	defer srv.Stop()
	step("seedance server %s", srv.URL)

	sched, err := c.StartScheduler(ctx, cluster.SchedulerOptions{Name: "seedance", ExtenderURL: srv.URL + "/extender",
		NodeCache: true, Bind: true})
	if err != nil {
		return err
	}
	defer sched.Stop()
	step("kube-scheduler `seedance` with the extender (node-cache, bindVerb) up")

	nodes := []workload.Node{
		{Name: "gpu-a", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
		{Name: "gpu-b", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("4"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
		{Name: "gpu-c", CPU: resource.MustParse("64"), Memory: resource.MustParse("512Gi"), GPU: resource.MustParse("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
	}
	if err := workload.CreateNodes(ctx, c.Client, nodes, 3); err != nil {
		return err
	}
	// gpu-c is left out on purpose: in node-cache mode Seedance knows only what it was told.
	if err := registerNodes(ctx, c.Client, srv, map[string]bool{"gpu-a": true, "gpu-b": true}); err != nil {
		return err
	}
	if n, err := srv.Metric("seedance_nodes"); err != nil || n != 2 {
		return fmt.Errorf("seedance_nodes = %v (%v), want 2 after POST /v1/nodes", n, err)
	}
	step("3 nodes in the API server, 2 (gpu-a, gpu-b) registered with seedance")

	pods := []workload.Pod{
		{Name: "train-1", Namespace: "team-a", CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPU: resource.MustParse("8")},
		{Name: "train-2", Namespace: "team-a", CPU: resource.MustParse("8"), Memory: resource.MustParse("64Gi"), GPU: resource.MustParse("8")},
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
		return fmt.Errorf("train-1 bound to %s, want gpu-a (the only registered node with 8 free GPUs)", p1.Spec.NodeName)
	}
	if n, err := srv.Metric("seedance_pods_bound"); err != nil || n != 1 {
		return fmt.Errorf("seedance_pods_bound = %v (%v), want 1: the bind did not go through Seedance", n, err)
	}
	code, body, err := srv.Do("GET", "/v1/decisions?pod=team-a/train-1", nil)
	if err != nil || code != 200 || !strings.Contains(string(body), "gpu-a") {
		return fmt.Errorf("GET /v1/decisions?pod=team-a/train-1: HTTP %d %v: %.300s", code, err, body)
	}
	step("train-1 (8 GPU) bound to gpu-a through seedance's filter, prioritize and bind")

	if _, err := api.Create(ctx, workload.PodObject(pods[1], "seedance"), metav1.CreateOptions{}); err != nil {
		return err
	}
	p2, err := waitPod(ctx, c.Client, "team-a", "train-2", *timeout, func(p *corev1.Pod) bool {
		return strings.Contains(workload.PodScheduledMessage(p), "unknown node")
	})
	if err != nil {
		return fmt.Errorf("train-2: want Pending with seedance's `unknown node` reason: %w (nodeName %q, PodScheduled: %q)",
			err, p2.Spec.NodeName, workload.PodScheduledMessage(p2))
	}
	if p2.Spec.NodeName != "" {
		return fmt.Errorf("train-2 bound to %s, want Pending", p2.Spec.NodeName)
	}
	step("train-2 (8 GPU) Pending: %s", workload.PodScheduledMessage(p2))

	summary := map[string]any{"result": "pass", "server": c.Server, "seedance": srv.URL, "train-1": p1.Spec.NodeName,
		"train-2": workload.PodScheduledMessage(p2), "seconds": time.Since(t0).Seconds()}
	b, _ := json.Marshal(summary)
	fmt.Println(string(b))
	return nil
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
