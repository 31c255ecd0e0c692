package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
)

// nullExtender is the cheapest extender kube-scheduler can call the way deploy/ ships Seedance
// (issue 40, the throughput ablation): HTTPS with the recipe's serving certificate, client
// certificates required (mutual TLS, as the StatefulSet's --client-ca), node-cache mode, and a
// filter that answers one node (the first candidate, as deciding at filter answers one pick), so
// kube-scheduler skips its score phase exactly as it does with Seedance. It makes no decision,
// keeps no state and watches nothing: a throughput run against it measures what the extender
// protocol itself costs kube-scheduler (its client's JSON, TLS, the round trip in the serial
// cycle), which no extender can go below. It runs in this process, so its CPU is counted with the
// control plane's.
type nullExtender struct {
	URL     string
	filters atomic.Int64
	srv     *http.Server
}

// extenderArgs is the part of kube-scheduler's ExtenderArgs the null extender reads (the Pod is
// skipped by the decoder, not kept).
type extenderArgs struct {
	NodeNames *[]string `json:"NodeNames"`
}

func startNullExtender(certs string) (*nullExtender, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(certs, "tls.crt"), filepath.Join(certs, "tls.key"))
	if err != nil {
		return nil, fmt.Errorf("null extender: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(certs, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("null extender: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	n := &nullExtender{URL: fmt.Sprintf("https://%s/extender", ln.Addr().String())}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /extender/filter", func(w http.ResponseWriter, r *http.Request) {
		var a extenderArgs
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.NodeNames == nil {
			http.Error(w, "bad ExtenderArgs", http.StatusBadRequest)
			return
		}
		n.filters.Add(1)
		names := []string{}
		if len(*a.NodeNames) > 0 {
			names = (*a.NodeNames)[:1]
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"NodeNames": names, "FailedNodes": map[string]string{},
			"FailedAndUnresolvableNodes": map[string]string{}, "Error": ""})
	})
	mux.HandleFunc("POST /extender/prioritize", func(w http.ResponseWriter, r *http.Request) {
		var a extenderArgs
		if err := json.NewDecoder(r.Body).Decode(&a); err != nil || a.NodeNames == nil {
			http.Error(w, "bad ExtenderArgs", http.StatusBadRequest)
			return
		}
		out := make([]map[string]any, 0, len(*a.NodeNames))
		for _, name := range *a.NodeNames {
			out = append(out, map[string]any{"Host": name, "Score": 0})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /extender/preempt", func(w http.ResponseWriter, r *http.Request) {
		// No victims: the null extender never makes room.
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"NodeNameToMetaVictims":{}}`))
	})
	n.srv = &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}}
	go n.srv.ServeTLS(ln, "", "")
	return n, nil
}

func (n *nullExtender) Stop() { n.srv.Close() }
