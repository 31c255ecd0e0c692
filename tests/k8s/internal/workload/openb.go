package workload

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// The openb trace's own CSVs (data/openb, docs in data/openb/SOURCE.md), read as the harness's
// nodes and pods the way Seedance's trace loader reads them: CPU in milli-cores, memory in MiB,
// a pod with gpu_milli < 1000 asks for a share of one GPU (annotation seedance.io/gpu-milli, no
// nvidia.com/gpu request, so kube-scheduler does not count it), gpu_spec becomes the
// seedance.io/gpu-models annotation.

// ReadOpenbNodes parses openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model.
func ReadOpenbNodes(path string) ([]Node, error) {
	t, err := readTable(path, []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}, nil)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Node
	for i := range t.rows {
		var n Node
		if n.Name, err = t.name(i, "sn"); err != nil {
			return nil, err
		}
		if seen[n.Name] {
			return nil, fmt.Errorf("%s:%d:sn: node %q listed twice", path, t.lines[i], n.Name)
		}
		seen[n.Name] = true
		cpu, err := t.count(i, "cpu_milli")
		if err != nil {
			return nil, err
		}
		mem, err := t.count(i, "memory_mib")
		if err != nil {
			return nil, err
		}
		gpu, err := t.count(i, "gpu")
		if err != nil {
			return nil, err
		}
		n.CPU = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
		n.Memory = *resource.NewQuantity(mem<<20, resource.BinarySI)
		n.GPU = *resource.NewQuantity(gpu, resource.DecimalSI)
		if gpu > 0 {
			n.GPUModel = t.str(i, "model")
		}
		out = append(out, n)
	}
	return out, nil
}

// ReadOpenbPods parses openb_pod_list_*.csv (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...])
// into pods of namespace ns.
func ReadOpenbPods(path, ns string) ([]Pod, error) {
	t, err := readTable(path, []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"},
		[]string{"gpu_spec", "qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Pod
	for i := range t.rows {
		p := Pod{Namespace: ns}
		if p.Name, err = t.name(i, "name"); err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%s:%d:name: pod %q listed twice", path, t.lines[i], p.Name)
		}
		seen[p.Name] = true
		cpu, err := t.count(i, "cpu_milli")
		if err != nil {
			return nil, err
		}
		mem, err := t.count(i, "memory_mib")
		if err != nil {
			return nil, err
		}
		gpus, err := t.count(i, "num_gpu")
		if err != nil {
			return nil, err
		}
		milli, err := t.count(i, "gpu_milli")
		if err != nil {
			return nil, err
		}
		if gpus > 0 && (milli < 1 || milli > 1000) {
			return nil, fmt.Errorf("%s:%d:gpu_milli: %d is not in 1..1000 for a GPU pod", path, t.lines[i], milli)
		}
		p.CPU = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
		p.Memory = *resource.NewQuantity(mem<<20, resource.BinarySI)
		switch {
		case gpus == 0:
		case milli == 1000:
			p.GPU = *resource.NewQuantity(gpus, resource.DecimalSI)
		default:
			if gpus > 1 {
				p.GPU = *resource.NewQuantity(gpus, resource.DecimalSI)
			}
			p.GPUMilli = strconv.FormatInt(milli, 10)
		}
		if gpus > 0 {
			p.GPUModels = t.str(i, "gpu_spec")
		}
		out = append(out, p)
	}
	return out, nil
}

// count is a non-negative integer cell.
func (t *table) count(i int, col string) (int64, error) {
	s := t.str(i, col)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s:%d:%s: %q is not a non-negative integer", t.file, t.lines[i], col, s)
	}
	return v, nil
}
