// Package seedance runs `seedance server` as a child process and talks to its HTTP API.
package seedance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Server is a running `seedance server`.
type Server struct {
	URL     string // http://127.0.0.1:PORT, or https:// (StartWith with a TLS client)
	LogFile string
	cmd     *exec.Cmd
	exited  chan error
	client  *http.Client
	// Token, when set, is sent as `Authorization: Bearer` with every write Do makes.
	Token string
}

// Remote is a Server the harness did not start (a proxy in front of replicas), reached with
// client (nil: plain HTTP's default client).
func Remote(url string, client *http.Client) *Server { return &Server{URL: url, client: client} }

// Start runs `BIN server --listen 127.0.0.1:0 --config CONFIG --db DIR/ledger.db` with its log in
// DIR/seedance.log and waits for its `listening` log line (which carries the port it picked).
func Start(ctx context.Context, bin, dir, config string, extraArgs ...string) (*Server, error) {
	args := append([]string{"server", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "ledger.db")}, extraArgs...)
	if config != "" {
		args = append(args, "--config", config)
	}
	return StartWith(ctx, bin, dir, args, nil, nil)
}

// StartWith runs `BIN ARGS...` (args[0] is `server`; it must listen on 127.0.0.1 with port 0) with
// env as its whole environment (nil: the harness's) and its log in DIR/seedance.log. tlsClient:
// the server serves HTTPS and the harness's own requests (Do, readiness, metrics) go through this
// client; nil: plain HTTP.
func StartWith(ctx context.Context, bin, dir string, args, env []string, tlsClient *http.Client) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{LogFile: filepath.Join(dir, "seedance.log"), exited: make(chan error, 1), client: http.DefaultClient}
	scheme := "http"
	if tlsClient != nil {
		s.client, scheme = tlsClient, "https"
	}
	logf, err := os.Create(s.LogFile)
	if err != nil {
		return nil, err
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = env
	s.cmd.Stdout = logf
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		err := s.cmd.Wait()
		pw.Close()
		s.exited <- err
	}()
	port := make(chan int, 1)
	go func() {
		// Copy every log line to the file; report the port from the first `listening` line.
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Bytes()
			logf.Write(append(line, '\n'))
			if sent {
				continue
			}
			var ev struct {
				Event string `json:"event"`
				Port  int    `json:"port"`
			}
			if json.Unmarshal(line, &ev) == nil && ev.Event == "listening" && ev.Port > 0 {
				port <- ev.Port
				sent = true
			}
		}
		io.Copy(io.Discard, pr)
		logf.Close()
	}()
	select {
	case p := <-port:
		s.URL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, p)
	case err := <-s.exited:
		return nil, fmt.Errorf("seedance server exited before listening (%v); log: %s", err, s.LogFile)
	case <-time.After(30 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("seedance server did not log `listening` in 30 s; log: %s", s.LogFile)
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	}
	return s, s.waitHealthy(ctx)
}

func (s *Server) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := s.httpClient().Get(s.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("seedance server %s/healthz not 200 after 30 s (%v)", s.URL, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// httpClient is the client of the harness's own requests (a Server made from a URL alone: plain
// HTTP's default client).
func (s *Server) httpClient() *http.Client {
	if s.client == nil {
		return http.DefaultClient
	}
	return s.client
}

// Stop sends SIGTERM and waits for the process (SIGKILL after 10 s).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.cmd = nil
}

// Do sends a request with a JSON body (nil: none) and returns the status and body.
func (s *Server) Do(method, path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.Token != "" && method != "GET" {
		req.Header.Set("Authorization", "Bearer "+s.Token)
	}
	resp, err := s.httpClient().Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// Metric returns the value of the sample `name` (with no labels) in /metrics.
func (s *Server) Metric(name string) (float64, error) {
	code, body, err := s.Do("GET", "/metrics", nil)
	if err != nil {
		return 0, err
	}
	if code != 200 {
		return 0, fmt.Errorf("/metrics: HTTP %d", code)
	}
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			var v float64
			if _, err := fmt.Sscan(f[1], &v); err != nil {
				return 0, fmt.Errorf("/metrics: %s: %v", name, err)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("/metrics has no sample %s", name)
}

// MetricSum returns the sum of the samples of `name` whose labels include every label="value" of
// labels (0 when none matches).
func (s *Server) MetricSum(name string, labels map[string]string) (float64, error) {
	code, body, err := s.Do("GET", "/metrics", nil)
	if err != nil {
		return 0, err
	}
	if code != 200 {
		return 0, fmt.Errorf("/metrics: HTTP %d", code)
	}
	sum := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[0], name+"{") {
			continue
		}
		match := true
		for k, v := range labels {
			match = match && strings.Contains(f[0], k+"=\""+v+"\"")
		}
		var x float64
		if _, err := fmt.Sscan(f[1], &x); err == nil && match {
			sum += x
		}
	}
	return sum, nil
}

// ConfigForAPIServer writes a seedance-config.yaml whose binder creates Bindings in the API server
// at url, with the bearer token and CA files given; extra (YAML) is appended as is.
func ConfigForAPIServer(path, url, tokenFile, caFile string, extra ...string) error {
	y := fmt.Sprintf("server:\n  kube_api_url: %s\n  kube_token_file: %s\n  kube_ca_file: %s\n", url, tokenFile, caFile)
	return os.WriteFile(path, []byte(y+strings.Join(extra, "")), 0o644)
}

// Pid is the server's process id (0 once stopped).
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
