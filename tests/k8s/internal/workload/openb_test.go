package workload

import (
	"strings"
	"testing"
)

func TestReadOpenb(t *testing.T) {
	nodes, err := ReadOpenbNodes(write(t, "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\nopenb-node-0001,32000,131072,0,G2\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].CPU.String() != "64" || nodes[0].Memory.String() != "256Gi" || nodes[0].GPU.Value() != 2 ||
		nodes[0].GPUModel != "P100" || nodes[1].GPUModel != "" {
		t.Fatalf("nodes = %+v", nodes)
	}
	pods, err := ReadOpenbPods(write(t, "p.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"+
		"whole,12000,16384,2,1000,,LS,Running,0,5,0\nshare,6000,12288,1,460,V100M16|V100M32,LS,Running,1,5,1\ncpu,500,100,0,0,,BE,Running,2,5,2\n"), "openb")
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 3 {
		t.Fatalf("pods = %+v", pods)
	}
	w := PodObject(pods[0], "seedance")
	if q := w.Spec.Containers[0].Resources.Requests[GPUResource]; q.Value() != 2 || w.Annotations != nil || w.Namespace != "openb" {
		t.Fatalf("whole-GPU pod %+v", w)
	}
	s := PodObject(pods[1], "seedance")
	if _, ok := s.Spec.Containers[0].Resources.Requests[GPUResource]; ok || s.Annotations["seedance.io/gpu-milli"] != "460" ||
		s.Annotations["seedance.io/gpu-models"] != "V100M16|V100M32" {
		t.Fatalf("share pod %+v", s)
	}
	if q := s.Spec.Containers[0].Resources.Requests["memory"]; q.String() != "12Gi" {
		t.Fatalf("share pod memory %s", q.String())
	}
	c := PodObject(pods[2], "seedance")
	if q := c.Spec.Containers[0].Resources.Requests["cpu"]; q.String() != "500m" || c.Annotations != nil {
		t.Fatalf("cpu pod %+v", c)
	}

	_, err = ReadOpenbPods(write(t, "bad.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1000,10,1,1200\n"), "openb")
	if err == nil || !strings.Contains(err.Error(), "bad.csv:2:gpu_milli") {
		t.Fatalf("err = %v, want bad.csv:2:gpu_milli", err)
	}
	_, err = ReadOpenbNodes(write(t, "badn.csv", "sn,cpu_milli,memory_mib,gpu,model\nn,-1,10,1,T4\n"))
	if err == nil || !strings.Contains(err.Error(), "badn.csv:2:cpu_milli") {
		t.Fatalf("err = %v, want badn.csv:2:cpu_milli", err)
	}
}
