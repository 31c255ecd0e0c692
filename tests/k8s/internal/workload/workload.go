// Package workload reads nodes and pods from CSV, creates them in an API server through client-go,
// and measures how fast kube-scheduler binds the pods.
package workload

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

const (
	GPUResource   = corev1.ResourceName("nvidia.com/gpu")
	GPUModelLabel = "nvidia.com/gpu.product"
)

// Node is one row of nodes.csv: name,cpu,memory,gpu[,gpu_model].
type Node struct {
	Name     string
	CPU      resource.Quantity
	Memory   resource.Quantity
	GPU      resource.Quantity
	GPUModel string
}

// Pod is one row of pods.csv: name,namespace,cpu,memory,gpu[,gpu_model][,gpu_milli][,tenant].
type Pod struct {
	Name, Namespace string
	CPU, Memory     resource.Quantity
	GPU             resource.Quantity
	GPUModel        string // nodeSelector nvidia.com/gpu.product
	GPUMilli        string // annotation seedance.io/gpu-milli
	GPUModels       string // annotation seedance.io/gpu-models ("V100M16|V100M32")
	Tenant          string // label seedance.io/tenant
}

type table struct {
	file   string
	header map[string]int
	rows   [][]string
	lines  []int
}

func readTable(path string, required, optional []string) (*table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	r.TrimLeadingSpace = true
	t := &table{file: path, header: map[string]int{}}
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s:1: header: %v", path, err)
	}
	known := map[string]bool{}
	for _, k := range append(append([]string{}, required...), optional...) {
		known[k] = true
	}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if !known[h] {
			return nil, fmt.Errorf("%s:1:%s: unknown column (known: %s)", path, h, strings.Join(append(required, optional...), ","))
		}
		t.header[h] = i
	}
	for _, k := range required {
		if _, ok := t.header[k]; !ok {
			return nil, fmt.Errorf("%s:1:%s: required column missing", path, k)
		}
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		line, _ := r.FieldPos(0)
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	return t, nil
}

func (t *table) str(i int, col string) string {
	j, ok := t.header[col]
	if !ok || j >= len(t.rows[i]) {
		return ""
	}
	return strings.TrimSpace(t.rows[i][j])
}

func (t *table) qty(i int, col string) (resource.Quantity, error) {
	s := t.str(i, col)
	if s == "" {
		return resource.Quantity{}, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("%s:%d:%s: %q is not a quantity", t.file, t.lines[i], col, s)
	}
	if q.Sign() < 0 {
		return q, fmt.Errorf("%s:%d:%s: %q is negative", t.file, t.lines[i], col, s)
	}
	return q, nil
}

func (t *table) name(i int, col string) (string, error) {
	s := t.str(i, col)
	if s == "" {
		return "", fmt.Errorf("%s:%d:%s: empty", t.file, t.lines[i], col)
	}
	return s, nil
}

// ReadNodes parses nodes.csv.
func ReadNodes(path string) ([]Node, error) {
	t, err := readTable(path, []string{"name", "cpu", "memory", "gpu"}, []string{"gpu_model"})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Node
	for i := range t.rows {
		var n Node
		if n.Name, err = t.name(i, "name"); err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("%s:%d:name: node %q listed twice", path, t.lines[i], n.Name)
		}
		seen[n.Name] = true
		if n.CPU, err = t.qty(i, "cpu"); err != nil {
			return nil, err
		}
		if n.Memory, err = t.qty(i, "memory"); err != nil {
			return nil, err
		}
		if n.GPU, err = t.qty(i, "gpu"); err != nil {
			return nil, err
		}
		n.GPUModel = t.str(i, "gpu_model")
		out = append(out, n)
	}
	return out, nil
}

// ReadPods parses pods.csv.
func ReadPods(path string) ([]Pod, error) {
	t, err := readTable(path, []string{"name", "namespace", "cpu", "memory", "gpu"}, []string{"gpu_model", "gpu_milli", "tenant"})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Pod
	for i := range t.rows {
		var p Pod
		if p.Name, err = t.name(i, "name"); err != nil {
			return nil, err
		}
		if p.Namespace, err = t.name(i, "namespace"); err != nil {
			return nil, err
		}
		if seen[p.Namespace+"/"+p.Name] {
			return nil, fmt.Errorf("%s:%d:name: pod %s/%s listed twice", path, t.lines[i], p.Namespace, p.Name)
		}
		seen[p.Namespace+"/"+p.Name] = true
		if p.CPU, err = t.qty(i, "cpu"); err != nil {
			return nil, err
		}
		if p.Memory, err = t.qty(i, "memory"); err != nil {
			return nil, err
		}
		if p.GPU, err = t.qty(i, "gpu"); err != nil {
			return nil, err
		}
		p.GPUModel, p.GPUMilli, p.Tenant = t.str(i, "gpu_model"), t.str(i, "gpu_milli"), t.str(i, "tenant")
		out = append(out, p)
	}
	return out, nil
}

// Synthetic makes n nodes with 8 GPUs and m one-GPU pods in namespace ns.
func Synthetic(n, m int, ns string) ([]Node, []Pod) {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{Name: fmt.Sprintf("node-%05d", i), CPU: resource.MustParse("96"), Memory: resource.MustParse("1Ti"),
			GPU: resource.MustParse("8"), GPUModel: "NVIDIA-A100-SXM4-80GB"}
	}
	pods := make([]Pod, m)
	for i := range pods {
		pods[i] = Pod{Name: fmt.Sprintf("pod-%06d", i), Namespace: ns, CPU: resource.MustParse("1"),
			Memory: resource.MustParse("4Gi"), GPU: resource.MustParse("1")}
	}
	return nodes, pods
}

// NodeObject is the v1.Node for n: capacity = allocatable, Ready, schedulable.
func NodeObject(n Node) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    n.CPU,
		corev1.ResourceMemory: n.Memory,
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	if !n.GPU.IsZero() {
		res[GPUResource] = n.GPU
	}
	labels := map[string]string{"kubernetes.io/hostname": n.Name}
	if n.GPUModel != "" {
		labels[GPUModelLabel] = n.GPUModel
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", Message: "seedance test harness", LastHeartbeatTime: metav1.Now()}},
		},
	}
}

// PodObject is the Pending v1.Pod for p, scheduled by schedulerName.
func PodObject(p Pod, schedulerName string) *corev1.Pod {
	req := corev1.ResourceList{}
	if !p.CPU.IsZero() {
		req[corev1.ResourceCPU] = p.CPU
	}
	if !p.Memory.IsZero() {
		req[corev1.ResourceMemory] = p.Memory
	}
	lim := corev1.ResourceList{}
	if !p.GPU.IsZero() {
		req[GPUResource] = p.GPU
		lim[GPUResource] = p.GPU // extended resources: request == limit
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		Spec: corev1.PodSpec{
			SchedulerName: schedulerName,
			Containers: []corev1.Container{{Name: "main", Image: "registry.invalid/seedance-test:0",
				Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}},
		},
	}
	if p.GPUModel != "" {
		pod.Spec.NodeSelector = map[string]string{GPUModelLabel: p.GPUModel}
	}
	if p.GPUMilli != "" || p.GPUModels != "" {
		pod.Annotations = map[string]string{}
	}
	if p.GPUMilli != "" {
		pod.Annotations["seedance.io/gpu-milli"] = p.GPUMilli
	}
	if p.GPUModels != "" {
		pod.Annotations["seedance.io/gpu-models"] = p.GPUModels
	}
	if p.Tenant != "" {
		pod.Labels = map[string]string{"seedance.io/tenant": p.Tenant}
	}
	return pod
}

// CreateNodes creates the nodes (object, then status) with `workers` requests in flight, Ready
// and without taints, as the node lifecycle controller would leave them.
func CreateNodes(ctx context.Context, c kubernetes.Interface, nodes []Node, workers int) error {
	return parallel(ctx, len(nodes), workers, func(i int) error {
		obj := NodeObject(nodes[i])
		created, err := c.CoreV1().Nodes().Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create node %s: %w", obj.Name, err)
		}
		// kube-apiserver's TaintNodesByCondition admission (on in clusters and in the harness) adds
		// node.kubernetes.io/not-ready at creation; no node lifecycle controller runs here to lift it.
		if len(created.Spec.Taints) > 0 {
			created.Spec.Taints = nil
			if created, err = c.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("node %s: remove the not-ready taint: %w", obj.Name, err)
			}
		}
		created.Status = obj.Status
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", obj.Name, err)
		}
		return nil
	})
}

// EnsureNamespaces creates the pods' namespaces that do not exist yet, each with its `default`
// ServiceAccount (the controller-manager's job, which does not run here; with kube-apiserver's
// ServiceAccount admission on, a pod is refused until its ServiceAccount exists).
func EnsureNamespaces(ctx context.Context, c kubernetes.Interface, pods []Pod) error {
	seen := map[string]bool{}
	for _, p := range pods {
		if seen[p.Namespace] {
			continue
		}
		seen[p.Namespace] = true
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: %w", p.Namespace, err)
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: p.Namespace}}
		if _, err := c.CoreV1().ServiceAccounts(p.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("namespace %s: ServiceAccount default: %w", p.Namespace, err)
		}
	}
	return nil
}

// Result is what RunPods measured.
type Result struct {
	Scheduler      string            `json:"scheduler"`
	Extender       bool              `json:"extender"`
	Nodes          int               `json:"nodes"`
	Pods           int               `json:"pods"`
	Bound          int               `json:"bound"`
	CreateSeconds  float64           `json:"create_seconds"`  // first create to last create
	TotalSeconds   float64           `json:"total_seconds"`   // first create to last bind seen
	BindSeconds    float64           `json:"bind_seconds"`    // first bind seen to last bind seen
	PodsPerSecond  float64           `json:"pods_per_second"` // bound / total_seconds
	Unschedulable  int               `json:"unschedulable"`   // RunPodsUntilDecided: pods reported Unschedulable
	Placements     map[string]string `json:"-"`               // namespace/name -> node
	PendingReasons map[string]string `json:"pending,omitempty"`
}

// RunPods creates the pods with schedulerName and waits (up to timeout) until every one is bound,
// watching pods through an informer started before the first create.
func RunPods(ctx context.Context, c kubernetes.Interface, pods []Pod, schedulerName string, workers int, timeout time.Duration) (*Result, error) {
	return runPods(ctx, c, pods, schedulerName, workers, timeout, false)
}

// RunPodsUntilDecided is RunPods that also ends when every pod is bound or was reported
// Unschedulable by kube-scheduler (PodScheduled=False, Unschedulable) at least once; those are
// counted in Result.Unschedulable (a workload that does not fit whole, or one that a scheduler
// fragments, still has a throughput).
func RunPodsUntilDecided(ctx context.Context, c kubernetes.Interface, pods []Pod, schedulerName string, workers int, timeout time.Duration) (*Result, error) {
	return runPods(ctx, c, pods, schedulerName, workers, timeout, true)
}

func runPods(ctx context.Context, c kubernetes.Interface, pods []Pod, schedulerName string, workers int, timeout time.Duration, untilDecided bool) (*Result, error) {
	if err := EnsureNamespaces(ctx, c, pods); err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, p := range pods {
		want[p.Namespace+"/"+p.Name] = true
	}
	var mu sync.Mutex
	res := &Result{Scheduler: schedulerName, Pods: len(pods), Placements: map[string]string{}}
	var firstBind, lastBind time.Time
	allBound := make(chan struct{})
	unschedulable := map[string]bool{}
	done := false
	observe := func(obj interface{}) {
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		key := pod.Namespace + "/" + pod.Name
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if !want[key] || done {
			return
		}
		if pod.Spec.NodeName == "" {
			if untilDecided && !unschedulable[key] && PodUnschedulable(pod) {
				unschedulable[key] = true
			} else {
				return
			}
		} else {
			if _, dup := res.Placements[key]; dup {
				return
			}
			res.Placements[key] = pod.Spec.NodeName
			delete(unschedulable, key) // retried and bound after all
			if firstBind.IsZero() {
				firstBind = now
			}
			lastBind = now
		}
		if len(res.Placements)+len(unschedulable) == len(want) {
			done = true
			close(allBound)
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.schedulerName", schedulerName).String()
	}))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, n interface{}) { observe(n) },
	}); err != nil {
		return nil, err
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("pod informer did not sync")
	}

	start := time.Now()
	if err := parallel(ctx, len(pods), workers, func(i int) error {
		if _, err := c.CoreV1().Pods(pods[i].Namespace).Create(ctx, PodObject(pods[i], schedulerName), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create pod %s/%s: %w", pods[i].Namespace, pods[i].Name, err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	res.CreateSeconds = time.Since(start).Seconds()
	if len(pods) == 0 {
		close(allBound)
	}

	var waitErr error
	select {
	case <-allBound:
	case <-time.After(timeout):
		waitErr = fmt.Errorf("timeout after %s", timeout)
	case <-ctx.Done():
		waitErr = ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	res.Bound = len(res.Placements)
	res.Unschedulable = len(unschedulable)
	if !lastBind.IsZero() {
		res.TotalSeconds = lastBind.Sub(start).Seconds()
		res.BindSeconds = lastBind.Sub(firstBind).Seconds()
		if res.TotalSeconds > 0 {
			res.PodsPerSecond = float64(res.Bound) / res.TotalSeconds
		}
	}
	if waitErr != nil {
		res.PendingReasons = pendingReasons(inf.GetStore(), res.Placements, 10)
		return res, fmt.Errorf("%d of %d pods bound: %w", res.Bound, len(pods), waitErr)
	}
	return res, nil
}

// pendingReasons returns up to limit unbound pods with their PodScheduled condition's message.
func pendingReasons(store cache.Store, bound map[string]string, limit int) map[string]string {
	out := map[string]string{}
	var keys []string
	for _, o := range store.List() {
		p := o.(*corev1.Pod)
		if _, ok := bound[p.Namespace+"/"+p.Name]; !ok {
			keys = append(keys, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(out) >= limit {
			break
		}
		o, _, _ := store.GetByKey(k)
		p := o.(*corev1.Pod)
		msg := "no PodScheduled condition yet"
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled {
				msg = cond.Reason + ": " + cond.Message
			}
		}
		out[k] = msg
	}
	return out
}

// PodUnschedulable: kube-scheduler reported PodScheduled=False, Unschedulable.
func PodUnschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// PodCondition returns the PodScheduled condition's message of a pod (empty if none).
func PodScheduledMessage(p *corev1.Pod) string {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled {
			return cond.Message
		}
	}
	return ""
}

func parallel(ctx context.Context, n, workers int, f func(int) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
loop:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break loop
		}
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}
