package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/configz"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
)

// SchedulerOptions configure StartScheduler.
type SchedulerOptions struct {
	// Name is the profile's schedulerName; pods with that spec.schedulerName are scheduled.
	// Empty means "default-scheduler".
	Name string
	// ExtenderURL is the extender's urlPrefix (http://127.0.0.1:PORT/extender); empty: none.
	ExtenderURL string
	// NodeCache sets nodeCacheCapable: requests carry NodeNames only.
	NodeCache bool
	// Bind hands binding to the extender (bindVerb: bind).
	Bind bool
	// QPS and Burst of kube-scheduler's API client (0: 5000, so the API client does not cap
	// the measured throughput; kube-scheduler's own defaults are 50 and 100).
	QPS   float32
	Burst int
	// PercentageOfNodesToScore (0: kube-scheduler's adaptive default, which stops looking for
	// feasible nodes after a share of a large cluster; 100: every node is filtered and scored).
	PercentageOfNodesToScore int
	// ExtenderScoreOnly disables every score plugin of the profile, so that the extender's
	// prioritize alone ranks the feasible nodes (its unique top score decides).
	ExtenderScoreOnly bool
	// ExtenderAllPods leaves out managedResources, so that kube-scheduler calls the extender for
	// every pod of the profile. With managedResources [nvidia.com/gpu] it calls the extender only
	// for pods that request nvidia.com/gpu: a GPU-share pod (annotation seedance.io/gpu-milli, no
	// nvidia.com/gpu request) and a CPU-only pod would be placed by kube-scheduler alone.
	ExtenderAllPods bool
	// ConfigYAML, when set, is the whole KubeSchedulerConfiguration (its own clientConnection; the
	// other fields above are then ignored but Name): the as-shipped scenarios pass deploy/'s.
	ConfigYAML string
}

// Scheduler is a running kube-scheduler.
type Scheduler struct {
	Name       string
	ConfigFile string
	cancel     context.CancelFunc
	done       chan error
	sched      *scheduler.Scheduler
}

// CachedPods returns how many pods kube-scheduler's own cache holds (bound and assumed): after a
// pod is deleted, the count drops once the scheduler has seen the deletion.
func (s *Scheduler) CachedPods() (int, error) { return s.sched.Cache.PodCount() }

// SchedulerConfigYAML renders the KubeSchedulerConfiguration for o, with kubeconfig as its
// clientConnection. Leader election is off (one scheduler per profile name).
func SchedulerConfigYAML(o SchedulerOptions, kubeconfig string) string {
	name := o.Name
	if name == "" {
		name = "default-scheduler"
	}
	qps, burst := o.QPS, o.Burst
	if qps == 0 {
		qps = 5000
	}
	if burst == 0 {
		burst = 5000
	}
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: %g
  burst: %d
leaderElection:
  leaderElect: false
`, kubeconfig, qps, burst)
	if o.PercentageOfNodesToScore > 0 {
		fmt.Fprintf(&b, "percentageOfNodesToScore: %d\n", o.PercentageOfNodesToScore)
	}
	fmt.Fprintf(&b, "profiles:\n- schedulerName: %q\n", name)
	if o.ExtenderScoreOnly {
		b.WriteString("  plugins:\n    score:\n      disabled:\n      - name: '*'\n")
	}
	if o.ExtenderURL != "" {
		fmt.Fprintf(&b, `extenders:
- urlPrefix: %q
  filterVerb: filter
  prioritizeVerb: prioritize
  preemptVerb: preempt
`, o.ExtenderURL)
		if o.Bind {
			b.WriteString("  bindVerb: bind\n")
		}
		fmt.Fprintf(&b, `  weight: 5
  nodeCacheCapable: %t
  httpTimeout: 5s
  ignorable: false
`, o.NodeCache)
		if !o.ExtenderAllPods {
			b.WriteString("  managedResources:\n  - name: nvidia.com/gpu\n    ignoredByScheduler: false\n")
		}
	}
	return b.String()
}

// StartScheduler runs the real kube-scheduler (cmd/kube-scheduler/app) in this process against
// c's API server, with the config SchedulerConfigYAML writes to c.Dir/scheduler-<name>.yaml.
func (c *Cluster) StartScheduler(ctx context.Context, o SchedulerOptions) (*Scheduler, error) {
	s := &Scheduler{Name: o.Name, done: make(chan error, 1)}
	if s.Name == "" {
		s.Name = "default-scheduler"
	}
	s.ConfigFile = filepath.Join(c.Dir, "scheduler-"+s.Name+".yaml")
	text := o.ConfigYAML
	if text == "" {
		text = SchedulerConfigYAML(o, c.Kubeconfig)
	}
	if err := os.WriteFile(s.ConfigFile, []byte(text), 0o644); err != nil {
		return nil, err
	}
	opts := options.NewOptions()
	opts.ConfigFile = s.ConfigFile
	opts.SecureServing.BindPort = 0 // no /healthz port: the harness's ready-file says when it runs
	runCtx, cancel := context.WithCancel(ctx)
	cc, sched, err := app.Setup(runCtx, opts)
	s.sched = sched
	if err != nil {
		cancel()
		return nil, fmt.Errorf("kube-scheduler setup (%s): %w", s.ConfigFile, err)
	}
	s.cancel = cancel
	go func() {
		err := app.Run(runCtx, cc, sched)
		configz.Delete("componentconfig") // Run registers it; the next scheduler in this process needs it free
		s.done <- err
	}()
	// Run starts the informers and waits for their caches before it schedules; wait for the
	// node and pod caches here too, so the scheduler has seen the cluster when this returns.
	synced := make(chan bool, 1)
	waitCtx, waitCancel := context.WithTimeout(runCtx, 60*time.Second)
	defer waitCancel()
	go func() {
		synced <- cache.WaitForCacheSync(waitCtx.Done(),
			cc.InformerFactory.Core().V1().Nodes().Informer().HasSynced,
			cc.InformerFactory.Core().V1().Pods().Informer().HasSynced)
	}()
	select {
	case ok := <-synced:
		if !ok {
			s.Stop()
			return nil, fmt.Errorf("kube-scheduler: informer caches did not sync in 60 s")
		}
	case err := <-s.done:
		cancel()
		s.cancel = nil
		return nil, fmt.Errorf("kube-scheduler stopped: %v", err)
	}
	return s, nil
}

// Stop stops the scheduler and waits until Run has returned.
func (s *Scheduler) Stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	s.cancel = nil
}
