package seedance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// ClusterNode is one node of GET /v1/cluster.
type ClusterNode struct {
	CPUm         int64  `json:"cpu_m"`
	MemoryMi     int64  `json:"memory_mi"`
	GPUs         int    `json:"gpus"`
	GPUModel     string `json:"gpu_model"`
	GPUMilliUsed int64  `json:"gpu_milli_used"`
}

// ClusterPod is one bound pod of GET /v1/cluster.
type ClusterPod struct {
	Node     string `json:"node"`
	UID      string `json:"uid"`
	GPUMilli int64  `json:"gpu_milli"`
}

// ClusterState is GET /v1/cluster: what the server's extender holds (from the watch).
type ClusterState struct {
	Nodes map[string]ClusterNode        `json:"nodes"`
	Pods  map[string]ClusterPod         `json:"pods"`  // "<namespace>/<name>"
	Quota map[string]map[string]float64 `json:"quota"` // tenant -> resource -> usage (milli-units)
}

// Cluster returns GET /v1/cluster.
func (s *Server) Cluster() (*ClusterState, error) {
	code, body, err := s.Do("GET", "/v1/cluster", nil)
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("GET /v1/cluster: HTTP %d: %.300s", code, body)
	}
	var st ClusterState
	if err := json.Unmarshal(body, &st); err != nil {
		return nil, fmt.Errorf("GET /v1/cluster: %v", err)
	}
	return &st, nil
}

// WaitReady polls GET /readyz until it answers 200 (the watch's first lists are applied).
func (s *Server) WaitReady(ctx context.Context, timeout time.Duration) error {
	var last string
	err := Poll(ctx, timeout, func() (bool, error) {
		code, body, err := s.Do("GET", "/readyz", nil)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("HTTP %d %s", code, body)
		return code == 200, nil
	})
	if err != nil {
		return fmt.Errorf("seedance %s/readyz: %v (last answer: %.300s)", s.URL, err, last)
	}
	return nil
}

// WaitCluster polls GET /v1/cluster until cond holds; it returns the last state seen either way.
func (s *Server) WaitCluster(ctx context.Context, timeout time.Duration, cond func(*ClusterState) bool) (*ClusterState, error) {
	var last *ClusterState
	err := Poll(ctx, timeout, func() (bool, error) {
		st, err := s.Cluster()
		if err != nil {
			return false, nil
		}
		last = st
		return cond(st), nil
	})
	if last == nil {
		last = &ClusterState{}
	}
	return last, err
}

// Poll calls cond every 20 ms (first at once) until it returns true or an error, or timeout passes.
func Poll(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("condition not met after %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
