package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/configz"
	"k8s.io/component-base/featuregate"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
)

// SchedulerOptions configure StartScheduler.
type SchedulerOptions struct {
	// Name is the profile's schedulerName that the Scheduler reports (the config says which
	// profiles run). Empty means "default-scheduler".
	Name string
	// ConfigYAML is the whole KubeSchedulerConfiguration, with its own clientConnection: deploy/'s,
	// as internal/shipped maps it (required).
	ConfigYAML string
	// FeatureGates are set in this process (kube-scheduler's --feature-gates; the gates are
	// process-wide, so only one scheduler with gates runs at a time) while the scheduler runs, and
	// restored when it stops. Empty: the release's defaults.
	FeatureGates map[string]bool
}

// Scheduler is a running kube-scheduler.
type Scheduler struct {
	Name       string
	ConfigFile string
	cancel     context.CancelFunc
	done       chan error
	sched      *scheduler.Scheduler
	restore    map[string]bool
}

// CachedPods returns how many pods kube-scheduler's own cache holds (bound and assumed): after a
// pod is deleted, the count drops once the scheduler has seen the deletion.
func (s *Scheduler) CachedPods() (int, error) { return s.sched.Cache.PodCount() }

// StartScheduler runs the real kube-scheduler (cmd/kube-scheduler/app) in this process against
// c's API server, with o.ConfigYAML written to c.Dir/scheduler-<name>.yaml.
func (c *Cluster) StartScheduler(ctx context.Context, o SchedulerOptions) (*Scheduler, error) {
	s := &Scheduler{Name: o.Name, done: make(chan error, 1)}
	if s.Name == "" {
		s.Name = "default-scheduler"
	}
	s.ConfigFile = filepath.Join(c.Dir, "scheduler-"+s.Name+".yaml")
	if o.ConfigYAML == "" {
		return nil, fmt.Errorf("kube-scheduler: no configuration (SchedulerOptions.ConfigYAML)")
	}
	if err := os.WriteFile(s.ConfigFile, []byte(o.ConfigYAML), 0o644); err != nil {
		return nil, err
	}
	if len(o.FeatureGates) > 0 {
		s.restore = map[string]bool{}
		for name := range o.FeatureGates {
			s.restore[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
		}
		if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(o.FeatureGates); err != nil {
			return nil, fmt.Errorf("kube-scheduler feature gates %v: %w", o.FeatureGates, err)
		}
	}
	opts := options.NewOptions()
	opts.ConfigFile = s.ConfigFile
	opts.SecureServing.BindPort = 0 // no /healthz port: the harness's ready-file says when it runs
	runCtx, cancel := context.WithCancel(ctx)
	cc, sched, err := app.Setup(runCtx, opts)
	s.sched = sched
	if err != nil {
		cancel()
		s.restoreGates()
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
		s.restoreGates()
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
	s.restoreGates()
}

// restoreGates puts back the feature gates StartScheduler changed.
func (s *Scheduler) restoreGates() {
	if len(s.restore) > 0 {
		utilfeature.DefaultMutableFeatureGate.SetFromMap(s.restore)
		s.restore = nil
	}
}
