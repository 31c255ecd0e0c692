package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadNodesAndPods(t *testing.T) {
	nodes, err := ReadNodes(write(t, "nodes.csv", "name,cpu,memory,gpu,gpu_model\n# a comment\ngpu-a,64,512Gi,8,NVIDIA-A100-SXM4-80GB\ncpu-1,16,64Gi,0,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].Name != "gpu-a" || nodes[0].GPU.Value() != 8 || nodes[0].Memory.String() != "512Gi" || nodes[1].GPUModel != "" {
		t.Fatalf("nodes = %+v", nodes)
	}
	n := NodeObject(nodes[0])
	if got := n.Status.Allocatable[GPUResource]; got.Value() != 8 || n.Labels[GPUModelLabel] != "NVIDIA-A100-SXM4-80GB" {
		t.Fatalf("node object %+v", n)
	}
	if _, ok := NodeObject(nodes[1]).Status.Allocatable[GPUResource]; ok {
		t.Fatal("a node with 0 GPUs must not advertise nvidia.com/gpu")
	}

	pods, err := ReadPods(write(t, "pods.csv", "name,namespace,cpu,memory,gpu,gpu_milli,tenant\np1,team-a,500m,1Gi,2,,team-a\np2,team-b,1,2Gi,0,250,\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := PodObject(pods[0], "seedance")
	req, lim := p.Spec.Containers[0].Resources.Requests, p.Spec.Containers[0].Resources.Limits
	if p.Spec.SchedulerName != "seedance" || req.Cpu().MilliValue() != 500 || req.Name(GPUResource, "").Value() != 2 ||
		lim.Name(GPUResource, "").Value() != 2 || p.Labels["seedance.io/tenant"] != "team-a" {
		t.Fatalf("pod object %+v", p)
	}
	if q := PodObject(pods[1], ""); q.Annotations["seedance.io/gpu-milli"] != "250" || len(q.Spec.Containers[0].Resources.Limits) != 0 {
		t.Fatalf("pod object %+v", q)
	}
}

func TestReadErrorsNameFileLineField(t *testing.T) {
	cases := []struct{ text, want string }{
		{"name,cpu,memory\nn,1,1Gi\n", "nodes.csv:1:gpu: required column missing"},
		{"name,cpu,memory,gpu,colour\n", "nodes.csv:1:colour: unknown column"},
		{"name,cpu,memory,gpu\nn1,1,1Gi,8\nn2,lots,1Gi,8\n", `nodes.csv:3:cpu: "lots" is not a quantity`},
		{"name,cpu,memory,gpu\nn1,1,1Gi,-1\n", `nodes.csv:2:gpu: "-1" is negative`},
		{"name,cpu,memory,gpu\n,1,1Gi,1\n", "nodes.csv:2:name: empty"},
		{"name,cpu,memory,gpu\nn1,1,1Gi,1\nn1,1,1Gi,1\n", `nodes.csv:3:name: node "n1" listed twice`},
	}
	for _, c := range cases {
		_, err := ReadNodes(write(t, "nodes.csv", c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.text, err, c.want)
		}
	}
	if _, err := ReadPods(write(t, "pods.csv", "name,namespace,cpu,memory,gpu\np,,1,1Gi,1\n")); err == nil ||
		!strings.Contains(err.Error(), "pods.csv:2:namespace: empty") {
		t.Errorf("pods.csv empty namespace: %v", err)
	}
}
