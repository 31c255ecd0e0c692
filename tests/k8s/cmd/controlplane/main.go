// controlplane: a real Kubernetes control plane for Seedance's tests (etcd embedded, Kubernetes'
// own kube-apiserver test server, the real kube-scheduler), in one process.
//
//	controlplane serve --dir DIR --seedance BIN SHIPPED [--ready-file F]
//	controlplane load --kubeconfig F --nodes nodes.csv --pods pods.csv [--scheduler-name N]
//	controlplane throughput --seedance BIN --work DIR SHIPPED [--nodes N --pods M | --nodes-csv F --pods-csv F]
//	controlplane smoke --seedance BIN --work DIR SHIPPED
//	controlplane parity --seedance BIN --work DIR SHIPPED --nodes F --pods F --expected F
//	controlplane capture --out DIR
//	controlplane failover --seedance BIN --work DIR SHIPPED
//	controlplane admission-failover --seedance BIN --work DIR SHIPPED --admission-db postgresql://...
//
// SHIPPED: --rendered RENDER --certs-script scripts/seedance-certs.sh [--scheduler-config FILE]
// [--drop-verb SPEC]. Every scenario runs deploy/ as kustomize renders it (shipped_test.sh) on a
// control plane with RBAC and the default admission plugins; there is no other setup.
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
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"seedance.dev/tests/k8s/internal/cluster"
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
// (kube-apiserver's and kube-scheduler's, through klog) to WORK/controlplane.log (verbose: stderr)
// through tap, and starts it under WORK/cp (RBAC, the default admission plugins: cluster.Start).
// stop stops the control plane, then closes the log.
func startControlPlane(ctx context.Context, work string, verbose bool) (c *cluster.Cluster, tap *logTap, stop func(), err error) {
	os.RemoveAll(work)
	logw, closeLog, err := logSink(work, verbose)
	if err != nil {
		return nil, nil, nil, err
	}
	tap = &logTap{w: logw}
	c, err = cluster.Start(ctx, cluster.Options{Dir: filepath.Join(work, "cp"), Log: tap})
	if err != nil {
		closeLog()
		return nil, nil, nil, err
	}
	return c, tap, func() { c.Stop(); closeLog() }, nil
}

// logTap passes the control plane's log through and keeps the lines that contain one of the
// strings a scenario asked it to watch (kube-scheduler's "Skipping extender" when it fails open).
type logTap struct {
	w       io.Writer
	mu      sync.Mutex
	watched []string
	lines   []string
}

func (t *logTap) Write(p []byte) (int, error) {
	t.mu.Lock()
	for _, line := range strings.Split(string(p), "\n") {
		for _, w := range t.watched {
			if strings.Contains(line, w) {
				t.lines = append(t.lines, line)
				break
			}
		}
	}
	t.mu.Unlock()
	return t.w.Write(p)
}

// watch starts keeping the lines that contain s.
func (t *logTap) watch(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.watched = append(t.watched, s)
}

// matching returns the kept lines that contain every one of parts.
func (t *logTap) matching(parts ...string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range t.lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
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

// serve runs deploy/ as rendered (the server and its scheduler, as the scenarios start them) and
// stays up until SIGTERM/SIGINT, for a test outside this program to use as a peer.
func serve(ctx context.Context, args []string) error {
	fs := newFlags("serve")
	dir := fs.String("dir", "", "working directory: etcd data, kubeconfig, ca.crt, token, logs (required; emptied first)")
	ready := fs.String("ready-file", "", "write this JSON file once everything is up (default DIR/ready.json)")
	bin := fs.String("seedance", "", "the seedance binary (required)")
	sf := addShippedFlags(fs)
	verbose := fs.Bool("v", false, "control plane logs to stderr (default DIR/controlplane.log)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dir == "" || *bin == "" {
		return usagef("--dir and --seedance are required")
	}
	d, err := sf.load()
	if err != nil {
		return err
	}
	if *ready == "" {
		*ready = filepath.Join(*dir, "ready.json")
	}
	// The directory is emptied first: refuse one that is neither empty nor a former serve's.
	if entries, err := os.ReadDir(*dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(*dir, "cp")); err != nil {
			return usagef("--dir %s is not empty and not a former serve's directory (serve empties it first)", *dir)
		}
	}
	c, _, stop, err := startControlPlane(ctx, *dir, *verbose)
	if err != nil {
		return err
	}
	defer stop()
	step, _ := stepLog("serve")
	a, err := startShipped(ctx, c, d, sf, *bin, *dir, 0, 2*time.Minute, nil, nil, step)
	if err != nil {
		return err
	}
	defer a.stop()
	info := cluster.ReadyInfo{Server: c.Server, Kubeconfig: c.Kubeconfig, CAFile: c.CAFile, TokenFile: c.TokenFile,
		Etcd: c.EtcdURL, PID: os.Getpid(), Scheduler: a.sched.Name, Seedance: a.srv.URL,
		SeedanceCAFile: filepath.Join(a.env.certs, "ca.crt"), SeedanceToken: a.token}
	if err := cluster.WriteReadyFile(*ready, info); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "controlplane: ready: %s (kubeconfig %s), seedance %s\n", c.Server, c.Kubeconfig, a.srv.URL)
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

func load(ctx context.Context, args []string) error {
	fs := newFlags("load")
	kubeconfig := fs.String("kubeconfig", "", "the control plane's kubeconfig (required)")
	nodesCSV := fs.String("nodes", "", "nodes.csv: name,cpu,memory,gpu[,gpu_model]")
	podsCSV := fs.String("pods", "", "pods.csv: name,namespace,cpu,memory,gpu[,gpu_model,gpu_milli,tenant]")
	name := fs.String("scheduler-name", "default-scheduler", "spec.schedulerName of the pods (serve's ready.json: scheduler)")
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
	res, err := workload.RunPods(ctx, c, pods, *name, *workers, *timeout)
	if res != nil {
		res.Nodes = len(nodes)
		json.NewEncoder(os.Stdout).Encode(res)
	}
	return err
}
