package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"

	"seedance.dev/tests/k8s/internal/seedance"
)

// Where a throughput run's time went (issue 40): kube-scheduler's own metrics (it runs in this
// process, so its registry is legacyregistry's), the extender's per-verb counts and latencies
// as Seedance measured them, and the CPU of this process (kube-apiserver, etcd, kube-scheduler,
// the load generator) and of the seedance server. Each run prints the difference of two
// snapshots, taken before its first create and after its last bind.

// cycleMetrics are the kube-scheduler metrics a profile keeps (counters; histograms as _sum and _count).
var cycleMetrics = map[string]bool{
	"scheduler_schedule_attempts_total":                    true,
	"scheduler_scheduling_attempt_duration_seconds":        true,
	"scheduler_scheduling_algorithm_duration_seconds":      true,
	"scheduler_framework_extension_point_duration_seconds": true,
	"scheduler_preemption_attempts_total":                  true,
	"scheduler_queue_incoming_pods_total":                  true,
}

type snapshot struct {
	values      map[string]float64 // "name{labels}" -> value
	selfCPU     float64            // this process: user + system seconds
	seedanceCPU float64            // the seedance server (0 without one)
}

func labelsOf(m *dto.Metric) string {
	var kv []string
	for _, l := range m.GetLabel() {
		kv = append(kv, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

// takeSnapshot reads kube-scheduler's registry, the seedance server's /metrics (srv may be nil)
// and both processes' CPU time.
func takeSnapshot(srv *seedance.Server) snapshot {
	s := snapshot{values: map[string]float64{}}
	if mfs, err := legacyregistry.DefaultGatherer.Gather(); err == nil {
		for _, mf := range mfs {
			if !cycleMetrics[mf.GetName()] {
				continue
			}
			for _, m := range mf.GetMetric() {
				l := labelsOf(m)
				switch mf.GetType() {
				case dto.MetricType_COUNTER:
					s.values[mf.GetName()+l] = m.GetCounter().GetValue()
				case dto.MetricType_HISTOGRAM:
					s.values[mf.GetName()+"_sum"+l] = m.GetHistogram().GetSampleSum()
					s.values[mf.GetName()+"_count"+l] = float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		s.selfCPU = float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	}
	if srv == nil {
		return s
	}
	if code, body, err := srv.Do("GET", "/metrics", nil); err == nil && code == 200 {
		for _, line := range strings.Split(string(body), "\n") {
			if !strings.HasPrefix(line, "seedance_decisions_total") && !strings.HasPrefix(line, "seedance_decision_duration_seconds_sum") &&
				!strings.HasPrefix(line, "seedance_decision_duration_seconds_count") && !strings.HasPrefix(line, "seedance_bind_errors_total") {
				continue
			}
			i := strings.LastIndexByte(line, ' ')
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil && i > 0 {
				s.values[line[:i]] = v
			}
		}
	}
	s.seedanceCPU = processCPU(srv.Pid())
	return s
}

// processCPU is the user + system seconds of process pid (/proc/PID/stat fields 14 and 15).
func processCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil || pid <= 0 {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// printCycleProfile prints what changed between two snapshots, one line per value, prefixed
// with the run's name, then the CPU per bound pod.
func printCycleProfile(run string, before, after snapshot, bound int) {
	var keys []string
	for k := range after.values {
		if after.values[k]-before.values[k] != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("profile %s: %s %g\n", run, k, after.values[k]-before.values[k])
	}
	self, sd := after.selfCPU-before.selfCPU, after.seedanceCPU-before.seedanceCPU
	per := func(x float64) float64 {
		if bound == 0 {
			return 0
		}
		return 1000 * x / float64(bound)
	}
	fmt.Printf("profile %s: cpu control plane (apiserver, etcd, scheduler, load) %.1f s (%.2f ms per bound pod), seedance server %.1f s (%.2f ms per bound pod)\n",
		run, self, per(self), sd, per(sd))
}

// startCPUProfile writes a Go CPU profile of this process (kube-apiserver, etcd, kube-scheduler
// and the load generator together) for one run to $SEEDANCE_CPU_PROFILE_DIR/RUN.pprof when that
// variable is set (`go tool pprof -top` splits the control plane's CPU by function); the returned
// function stops it. Unset: nothing is recorded.
func startCPUProfile(run string) func() {
	dir := os.Getenv("SEEDANCE_CPU_PROFILE_DIR")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, run+".pprof"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile %s: %v\n", run, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "cpu profile %s: %v\n", run, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
