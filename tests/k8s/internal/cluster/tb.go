// Package cluster starts a real control plane in-process: embedded etcd, Kubernetes' own
// kube-apiserver test server and the real kube-scheduler, for Seedance's tests.
package cluster

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// programTB lets a long-running program (not a `go test` binary) use the test server helpers,
// which take ktesting.TB. Fatal ends the calling goroutine as testing.T does; the program's
// cleanups run when Close is called.
type programTB struct {
	mu       sync.Mutex
	name     string
	log      io.Writer
	failed   bool
	cleanups []func()
	tempDirs []string
}

func newProgramTB(name string, log io.Writer) *programTB {
	if log == nil {
		log = io.Discard
	}
	return &programTB{name: name, log: log}
}

func (t *programTB) Attr(key, value string) {}
func (t *programTB) Chdir(dir string) {
	if err := os.Chdir(dir); err != nil {
		t.Fatalf("chdir %s: %v", dir, err)
	}
}
func (t *programTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}
func (t *programTB) Error(args ...any) { t.Log(args...); t.Fail() }
func (t *programTB) Errorf(format string, args ...any) {
	t.Logf(format, args...)
	t.Fail()
}
func (t *programTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}
func (t *programTB) FailNow() { t.Fail(); runtime.Goexit() }
func (t *programTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}
func (t *programTB) Fatal(args ...any) { t.Log(args...); t.FailNow() }
func (t *programTB) Fatalf(format string, args ...any) {
	t.Logf(format, args...)
	t.FailNow()
}
func (t *programTB) Helper()                          {}
func (t *programTB) Log(args ...any)                  { fmt.Fprintln(t.log, args...) }
func (t *programTB) Logf(format string, args ...any)  { fmt.Fprintf(t.log, format+"\n", args...) }
func (t *programTB) Name() string                     { return t.name }
func (t *programTB) Setenv(key, value string)         { os.Setenv(key, value) }
func (t *programTB) Skip(args ...any)                 { t.Log(args...); t.SkipNow() }
func (t *programTB) Skipf(format string, args ...any) { t.Logf(format, args...); t.SkipNow() }
func (t *programTB) SkipNow()                         { runtime.Goexit() }
func (t *programTB) Skipped() bool                    { return false }
func (t *programTB) TempDir() string {
	d, err := os.MkdirTemp("", "seedance-k8s-")
	if err != nil {
		t.Fatalf("temp dir: %v", err)
	}
	t.mu.Lock()
	t.tempDirs = append(t.tempDirs, d)
	t.mu.Unlock()
	return d
}

// Close runs the registered cleanups, last first, and removes the temp dirs.
func (t *programTB) Close() {
	t.mu.Lock()
	cleanups := t.cleanups
	t.cleanups = nil
	dirs := t.tempDirs
	t.tempDirs = nil
	t.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}
