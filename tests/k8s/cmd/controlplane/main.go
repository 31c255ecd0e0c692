// controlplane: a real Kubernetes control plane for Seedance's tests (etcd embedded, Kubernetes'
// own kube-apiserver test server, the real kube-scheduler), in one process.
//
//	controlplane serve --dir DIR [--ready-file F] [--extender URL] [--node-cache] [--bind] [--scheduler-name N]
//	controlplane load --kubeconfig F --nodes nodes.csv --pods pods.csv [--scheduler-name N] [--seedance-url U]
//	controlplane throughput --seedance BIN [--nodes N --pods M | --nodes-csv F --pods-csv F]
//	controlplane smoke --seedance BIN --work DIR
//	controlplane capture --out DIR
//	controlplane failover --seedance BIN --work DIR
//	controlplane admission-failover --seedance BIN --work DIR --admission-db postgresql://...
//
// Exit status: 0 done, 1 failed, 2 bad usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/seedance"
	"seedance.dev/tests/k8s/internal/workload"
)

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: controlplane serve|load|throughput|smoke|capture|parity [flags] (-h for each)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	cmds := map[string]func(context.Context, []string) error{
		"serve": serve, "load": load, "throughput": throughput, "smoke": smoke, "capture": capture, "parity": parity,
	}
	cmds["failover"] = failover
	cmds["admission-failover"] = admissionFailover
	run, ok := cmds[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "controlplane: unknown command %q (serve, load, throughput, smoke, capture, parity)\n", os.Args[1])
		os.Exit(2)
	}
	err := run(ctx, os.Args[2:])
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ue) || errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(os.Stderr, "controlplane %s: %v\n", os.Args[1], err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "controlplane %s: FAIL: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// startControlPlane empties a scenario's working directory, sends the control plane's own logs
// to WORK/controlplane.log (verbose: stderr) and starts it under WORK/cp. stop stops the control
// plane, then closes the log.
func startControlPlane(ctx context.Context, work string, verbose bool) (c *cluster.Cluster, stop func(), err error) {
	return startControlPlaneAs(ctx, work, verbose, false)
}

// startControlPlaneAs is startControlPlane with cluster.Options.AsShipped (RBAC, default admission).
func startControlPlaneAs(ctx context.Context, work string, verbose, asShipped bool) (c *cluster.Cluster, stop func(), err error) {
	os.RemoveAll(work)
	logw, closeLog, err := logSink(work, verbose)
	if err != nil {
		return nil, nil, err
	}
	c, err = cluster.Start(ctx, cluster.Options{Dir: filepath.Join(work, "cp"), Log: logw, AsShipped: asShipped})
	if err != nil {
		closeLog()
		return nil, nil, err
	}
	return c, func() { c.Stop(); closeLog() }, nil
}

// stepLog returns a printer of a scenario's progress, "NAME:   12.3 s  what happened", in seconds
// since t0, the time of the call.
func stepLog(name string) (step func(format string, a ...any), t0 time.Time) {
	t0 = time.Now()
	return func(format string, a ...any) {
		fmt.Printf(name+": %6.1f s  "+format+"\n", append([]any{time.Since(t0).Seconds()}, a...)...)
	}, t0
}

// logSink opens DIR/controlplane.log for the control plane's own logs (verbose=true: stderr).
func logSink(dir string, verbose bool) (io.Writer, func(), error) {
	if verbose {
		return os.Stderr, func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	f, err := os.Create(filepath.Join(dir, "controlplane.log"))
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func serve(ctx context.Context, args []string) error {
	fs := newFlags("serve")
	dir := fs.String("dir", "", "working directory: etcd data, kubeconfig, ca.crt, token, logs (required)")
	ready := fs.String("ready-file", "", "write this JSON file once everything is up (default DIR/ready.json)")
	extender := fs.String("extender", "", "start kube-scheduler with this extender urlPrefix (http://127.0.0.1:PORT/extender)")
	noScheduler := fs.Bool("no-scheduler", false, "start no kube-scheduler")
	nodeCache := fs.Bool("node-cache", true, "extender nodeCacheCapable (requests carry NodeNames only)")
	bind := fs.Bool("bind", true, "extender bindVerb: bind (the extender creates the Binding)")
	name := fs.String("scheduler-name", "default-scheduler", "kube-scheduler profile's schedulerName (seedance: second scheduler)")
	verbose := fs.Bool("v", false, "control plane logs to stderr (default DIR/controlplane.log)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("--dir is required")
	}
	if *ready == "" {
		*ready = filepath.Join(*dir, "ready.json")
	}
	logw, closeLog, err := logSink(*dir, *verbose)
	if err != nil {
		return err
	}
	defer closeLog()
	os.Remove(*ready)
	c, err := cluster.Start(ctx, cluster.Options{Dir: *dir, Log: logw})
	if err != nil {
		return err
	}
	defer c.Stop()
	info := cluster.ReadyInfo{Server: c.Server, Kubeconfig: c.Kubeconfig, CAFile: c.CAFile, TokenFile: c.TokenFile,
		Etcd: c.EtcdURL, PID: os.Getpid()}
	if !*noScheduler {
		s, err := c.StartScheduler(ctx, cluster.SchedulerOptions{Name: *name, ExtenderURL: *extender, NodeCache: *nodeCache, Bind: *bind})
		if err != nil {
			return err
		}
		defer s.Stop()
		info.Scheduler = s.Name
	}
	if err := cluster.WriteReadyFile(*ready, info); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "controlplane: ready: %s (kubeconfig %s)\n", c.Server, c.Kubeconfig)
	<-ctx.Done()
	os.Remove(*ready)
	return nil
}

func clientFromKubeconfig(path string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", path, err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	return kubernetes.NewForConfig(cfg)
}

// registerNodes posts the API server's NodeList to seedance's POST /v1/nodes (node-cache mode's
// documented manual path: `kubectl get nodes -o json | curl --data-binary @- .../v1/nodes`).
func registerNodes(ctx context.Context, c kubernetes.Interface, s *seedance.Server, only map[string]bool) error {
	list, err := c.CoreV1().Nodes().List(ctx, metav1ListAll())
	if err != nil {
		return err
	}
	list.APIVersion, list.Kind = "v1", "NodeList"
	if only != nil {
		kept := list.Items[:0]
		for _, n := range list.Items {
			if only[n.Name] {
				kept = append(kept, n)
			}
		}
		list.Items = kept
	}
	body, err := json.Marshal(list)
	if err != nil {
		return err
	}
	code, resp, err := s.Do("POST", "/v1/nodes", body)
	if err != nil {
		return err
	}
	if code != 200 {
		return fmt.Errorf("seedance POST /v1/nodes: HTTP %d: %s", code, resp)
	}
	return nil
}

func load(ctx context.Context, args []string) error {
	fs := newFlags("load")
	kubeconfig := fs.String("kubeconfig", "", "the control plane's kubeconfig (required)")
	nodesCSV := fs.String("nodes", "", "nodes.csv: name,cpu,memory,gpu[,gpu_model]")
	podsCSV := fs.String("pods", "", "pods.csv: name,namespace,cpu,memory,gpu[,gpu_model,gpu_milli,tenant]")
	name := fs.String("scheduler-name", "default-scheduler", "spec.schedulerName of the pods")
	seedanceURL := fs.String("seedance-url", "", "also POST the nodes to this seedance server's /v1/nodes")
	workers := fs.Int("workers", 16, "API requests in flight")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for every pod to be bound")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *kubeconfig == "" {
		return usagef("--kubeconfig is required")
	}
	var nodes []workload.Node
	var pods []workload.Pod
	var err error
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
	c, err := clientFromKubeconfig(*kubeconfig)
	if err != nil {
		return err
	}
	if err := workload.CreateNodes(ctx, c, nodes, *workers); err != nil {
		return err
	}
	if *seedanceURL != "" {
		if err := registerNodes(ctx, c, &seedance.Server{URL: *seedanceURL}, nil); err != nil {
			return err
		}
	}
	res, err := workload.RunPods(ctx, c, pods, *name, *workers, *timeout)
	if res != nil {
		res.Nodes = len(nodes)
		json.NewEncoder(os.Stdout).Encode(res)
	}
	return err
}
