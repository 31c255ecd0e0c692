package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"seedance.dev/tests/k8s/internal/cluster"
	"seedance.dev/tests/k8s/internal/workload"
)

// rawClient speaks HTTP to the API server as a client outside it would: bearer token, CA bundle.
type rawClient struct {
	server, token string
	http          *http.Client
}

func newRawClient(c *cluster.Cluster) (*rawClient, error) {
	ca, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s: no PEM certificate", c.CAFile)
	}
	tok, err := os.ReadFile(c.TokenFile)
	if err != nil {
		return nil, err
	}
	return &rawClient{server: c.Server, token: strings.TrimSpace(string(tok)),
		http: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}, nil
}

// exchange is one request and its response, as saved.
type exchange struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Request json.RawMessage   `json:"request,omitempty"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

func (r *rawClient) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.server+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return r.http.Do(req)
}

// capturer saves NAME.json (the response body's bytes, as received after HTTP/1.1 de-chunking)
// and NAME.http.json (method, path, request body, status, the headers that do not vary per run).
type capturer struct {
	dir   string
	raw   *rawClient
	index []string
}

func (cp *capturer) save(name string, method, path string, reqBody []byte, resp *http.Response, body []byte) error {
	h := map[string]string{}
	for k, v := range resp.Header {
		switch k {
		case "Date", "Audit-Id", "X-Kubernetes-Pf-Flowschema-Uid", "X-Kubernetes-Pf-Prioritylevel-Uid":
			continue // differ on every run
		}
		h[k] = strings.Join(v, ", ")
	}
	ex := exchange{Method: method, Path: path, Status: resp.StatusCode, Headers: h}
	if reqBody != nil {
		ex.Request = json.RawMessage(reqBody)
	}
	meta, err := json.MarshalIndent(ex, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cp.dir, name+".http.json"), append(meta, '\n'), 0o644); err != nil {
		return err
	}
	cp.index = append(cp.index, fmt.Sprintf("%s\t%s %s\t%d", name, method, path, resp.StatusCode))
	return os.WriteFile(filepath.Join(cp.dir, name+".json"), body, 0o644)
}

// call sends one request, saves it under name, and checks the status.
func (cp *capturer) call(ctx context.Context, name, method, path string, reqBody []byte, wantStatus int) ([]byte, error) {
	resp, err := cp.raw.do(ctx, method, path, reqBody)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != wantStatus {
		return nil, fmt.Errorf("%s %s: HTTP %d, want %d: %s", method, path, resp.StatusCode, wantStatus, body)
	}
	return body, cp.save(name, method, path, reqBody, resp, body)
}

func resourceVersionOf(body []byte) (string, error) {
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &o); err != nil || o.Metadata.ResourceVersion == "" {
		return "", fmt.Errorf("no metadata.resourceVersion in %.200s", body)
	}
	return o.Metadata.ResourceVersion, nil
}

// capture: the golden wire captures of tests/data/k8s/ from a real kube-apiserver.
func capture(ctx context.Context, args []string) error {
	fs := newFlags("capture")
	out := fs.String("out", "", "directory for the captures (required)")
	work := fs.String("work", "", "working directory (default: a temp dir)")
	verbose := fs.Bool("v", false, "control plane logs to stderr")
	noCache := fs.Bool("no-watch-cache", false, "kube-apiserver --watch-cache=false: capture only the 410 Gone of a watch "+
		"from a compacted resourceVersion (with the cache, such a watch is served from it or answered without the ERROR event)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	var apiFlags []string
	if *noCache {
		apiFlags = []string{"--watch-cache=false"}
	}
	if *work == "" {
		d, err := os.MkdirTemp("", "seedance-capture-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*work = d
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	logw, closeLog, err := logSink(*work, *verbose)
	if err != nil {
		return err
	}
	defer closeLog()
	c, err := cluster.Start(ctx, cluster.Options{Dir: filepath.Join(*work, "cp"), Log: logw, APIServerFlags: apiFlags})
	if err != nil {
		return err
	}
	defer c.Stop()
	raw, err := newRawClient(c)
	if err != nil {
		return err
	}
	cp := &capturer{dir: *out, raw: raw}

	if *noCache {
		if err := cp.watchGone(ctx, c); err != nil {
			return err
		}
	} else {
		if err := cp.objects(ctx, c); err != nil {
			return err
		}
	}
	cp.mergeIndex(filepath.Join(*out, "INDEX.tsv"))
	sort.Strings(cp.index)
	idx := "# name\trequest\tstatus (captured by `controlplane capture`; see README.md)\n" + strings.Join(cp.index, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(*out, "INDEX.tsv"), []byte(idx), 0o644); err != nil {
		return err
	}
	fmt.Printf("capture: %d exchanges written to %s\n", len(cp.index), *out)
	return nil
}

// objects: two GPU nodes and two Pending pods (no scheduler runs), their lists, a watch, a
// Binding's 201 and 409, and a Lease's create, GET, PUT and 409 on a stale resourceVersion.
func (cp *capturer) objects(ctx context.Context, c *cluster.Cluster) error {
	// Objects: two GPU nodes, a namespace with two pods (no scheduler runs: they stay Pending).
	q := resource.MustParse
	if err := workload.CreateNodes(ctx, c.Client, []workload.Node{
		{Name: "gpu-a", CPU: q("64"), Memory: q("512Gi"), GPU: q("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"},
		{Name: "gpu-b", CPU: q("32"), Memory: q("256Gi"), GPU: q("4"), GPUModel: "Tesla-T4"},
	}, 2); err != nil {
		return err
	}
	pods := []workload.Pod{
		{Name: "train-1", Namespace: "team-a", CPU: q("8"), Memory: q("64Gi"), GPU: q("2"), Tenant: "team-a"},
		{Name: "infer-1", Namespace: "team-a", CPU: q("2"), Memory: q("8Gi"), GPUMilli: "250"},
	}
	if err := workload.EnsureNamespaces(ctx, c.Client, pods); err != nil {
		return err
	}
	for _, p := range pods {
		if _, err := c.Client.CoreV1().Pods(p.Namespace).Create(ctx, workload.PodObject(p, ""), metav1.CreateOptions{}); err != nil {
			return err
		}
	}

	if _, err := cp.call(ctx, "nodes-list", "GET", "/api/v1/nodes", nil, 200); err != nil {
		return err
	}
	podList, err := cp.call(ctx, "pods-list", "GET", "/api/v1/pods", nil, 200)
	if err != nil {
		return err
	}
	listRV, err := resourceVersionOf(podList)
	if err != nil {
		return err
	}

	// A watch from the list's resourceVersion: ADDED, MODIFIED, DELETED of a third pod, then the
	// BOOKMARK the watch cache sends 2 s before the watch's timeout.
	if err := cp.watchEvents(ctx, c, listRV); err != nil {
		return err
	}

	// Binding: created once (201), the second Binding of the same pod is a 409 Conflict.
	bind := []byte(`{"apiVersion":"v1","kind":"Binding","metadata":{"name":"train-1","namespace":"team-a"},"target":{"apiVersion":"v1","kind":"Node","name":"gpu-a"}}`)
	if _, err := cp.call(ctx, "binding-create", "POST", "/api/v1/namespaces/team-a/pods/train-1/binding", bind, 201); err != nil {
		return err
	}
	bind2 := bytes.Replace(bind, []byte(`"gpu-a"`), []byte(`"gpu-b"`), 1)
	if _, err := cp.call(ctx, "binding-conflict", "POST", "/api/v1/namespaces/team-a/pods/train-1/binding", bind2, 409); err != nil {
		return err
	}
	if _, err := cp.call(ctx, "pod-bound", "GET", "/api/v1/namespaces/team-a/pods/train-1", nil, 200); err != nil {
		return err
	}

	return cp.leases(ctx)
}

// watchGone: compact etcd at its current revision, then watch from a resourceVersion the
// compaction removed. Without the watch cache the API server answers the watch with 200 and one
// ERROR event carrying a Status with code 410 (reason Expired), then ends the stream.
func (cp *capturer) watchGone(ctx context.Context, c *cluster.Cluster) error {
	q := resource.MustParse
	p := workload.Pod{Name: "old-1", Namespace: "team-a", CPU: q("1"), Memory: q("1Gi")}
	if err := workload.EnsureNamespaces(ctx, c.Client, []workload.Pod{p}); err != nil {
		return err
	}
	created, err := c.Client.CoreV1().Pods("team-a").Create(ctx, workload.PodObject(p, ""), metav1.CreateOptions{})
	if err != nil {
		return err
	}
	oldRV := created.ResourceVersion
	// Two later writes: the compaction must remove the revision right after oldRV too (a watch
	// from oldRV starts at oldRV+1; at the compaction's own revision etcd sends the event without
	// its previous value, which the API server reports as a 500 InternalError instead).
	for _, job := range []string{"old", "older"} {
		patch := []byte(`{"metadata":{"labels":{"seedance.io/job":"` + job + `"}}}`)
		if _, err := c.Client.CoreV1().Pods("team-a").Patch(ctx, "old-1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return err
		}
	}
	status, err := c.Etcd.Get(ctx, "compact-probe")
	if err != nil {
		return err
	}
	if _, err := c.Etcd.Compact(ctx, status.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		return fmt.Errorf("etcd compact: %w", err)
	}
	path := "/api/v1/namespaces/team-a/pods?watch=true&timeoutSeconds=5&resourceVersion=" + oldRV
	goneBody, err := cp.call(ctx, "watch-gone", "GET", path, nil, 200)
	if err != nil {
		return err
	}
	if !bytes.Contains(goneBody, []byte(`"type":"ERROR"`)) || !bytes.Contains(goneBody, []byte(`"code":410`)) {
		return fmt.Errorf("watch from compacted resourceVersion %s: want an ERROR event with code 410, got %.300s", oldRV, goneBody)
	}
	return nil
}

// mergeIndex keeps the entries of an earlier run's INDEX.tsv that this run did not capture.
func (cp *capturer) mergeIndex(path string) {
	old, err := os.ReadFile(path)
	if err != nil {
		return
	}
	have := map[string]bool{}
	for _, e := range cp.index {
		have[strings.SplitN(e, "\t", 2)[0]] = true
	}
	for _, line := range strings.Split(strings.TrimSpace(string(old)), "\n") {
		if line == "" || strings.HasPrefix(line, "#") || have[strings.SplitN(line, "\t", 2)[0]] {
			continue
		}
		cp.index = append(cp.index, line)
	}
}

func (cp *capturer) watchEvents(ctx context.Context, c *cluster.Cluster, fromRV string) error {
	path := "/api/v1/namespaces/team-a/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=6&resourceVersion=" + fromRV
	resp, err := cp.raw.do(ctx, "GET", path, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("watch: HTTP %d: %s", resp.StatusCode, b)
	}
	bodyCh := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(resp.Body) // until the server ends the watch at timeoutSeconds
		bodyCh <- b
	}()
	q := resource.MustParse
	pods := c.Client.CoreV1().Pods("team-a")
	p := workload.Pod{Name: "short-1", Namespace: "team-a", CPU: q("1"), Memory: q("1Gi"), GPU: q("1")}
	if _, err := pods.Create(ctx, workload.PodObject(p, ""), metav1.CreateOptions{}); err != nil {
		return err
	}
	patch := []byte(`{"metadata":{"labels":{"seedance.io/job":"short"}}}`)
	if _, err := pods.Patch(ctx, "short-1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	zero := int64(0)
	if err := pods.Delete(ctx, "short-1", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		return err
	}
	var body []byte
	select {
	case body = <-bodyCh:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("watch did not end at its timeoutSeconds=6")
	}
	for _, want := range []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK"} {
		if !bytes.Contains(body, []byte(`{"type":"`+want+`"`)) {
			return fmt.Errorf("watch stream has no %s event: %.500s", want, body)
		}
	}
	return cp.save("watch-events", "GET", path, nil, resp, body)
}

func (cp *capturer) leases(ctx context.Context) error {
	const base = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
	create := []byte(`{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"seedance","namespace":"kube-system"},` +
		`"spec":{"holderIdentity":"seedance-0","leaseDurationSeconds":15,"acquireTime":"2026-12-01T10:00:00.000000Z","renewTime":"2026-12-01T10:00:00.000000Z","leaseTransitions":0}}`)
	if _, err := cp.call(ctx, "lease-create", "POST", base, create, 201); err != nil {
		return err
	}
	got, err := cp.call(ctx, "lease-get", "GET", base+"/seedance", nil, 200)
	if err != nil {
		return err
	}
	var lease map[string]any
	if err := json.Unmarshal(got, &lease); err != nil {
		return err
	}
	staleRV := lease["metadata"].(map[string]any)["resourceVersion"]
	lease["spec"].(map[string]any)["renewTime"] = "2026-12-01T10:00:10.000000Z"
	put, _ := json.Marshal(lease)
	if _, err := cp.call(ctx, "lease-put", "PUT", base+"/seedance", put, 200); err != nil {
		return err
	}
	// A second writer that still holds the old resourceVersion loses: 409 Conflict.
	lease["metadata"].(map[string]any)["resourceVersion"] = staleRV
	lease["spec"].(map[string]any)["holderIdentity"] = "seedance-1"
	stale, _ := json.Marshal(lease)
	_, err = cp.call(ctx, "lease-put-conflict", "PUT", base+"/seedance", stale, 409)
	return err
}
