// Mutual TLS and network policy of deploy/ (issue 40): the shipped openssl recipe's certificates
// for the Secrets the tests mount, the NetworkPolicy's rules, deploy/cert-manager's Certificates,
// and the tlsConfig files of a KubeSchedulerConfiguration.
package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// tlsFiles returns the tlsConfig file paths of the one extender of a KubeSchedulerConfiguration.
func tlsFiles(t *testing.T, text string) []string {
	t.Helper()
	var cfg struct {
		Extenders []struct {
			TLSConfig struct {
				CAFile   string `json:"caFile"`
				CertFile string `json:"certFile"`
				KeyFile  string `json:"keyFile"`
			} `json:"tlsConfig"`
		} `json:"extenders"`
	}
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil || len(cfg.Extenders) != 1 {
		t.Fatalf("KubeSchedulerConfiguration: %v", err)
	}
	c := cfg.Extenders[0].TLSConfig
	return []string{c.CAFile, c.CertFile, c.KeyFile}
}

// The NetworkPolicy selects the server's pods and admits the second scheduler's pods and
// Prometheus on the server's port; deploy/ (a kube-scheduler on the host network) adds an ipBlock.
func TestNetworkPolicyAdmitsTheScheduler(t *testing.T) {
	type peer struct {
		PodSelector *struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"podSelector"`
		NamespaceSelector *struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"namespaceSelector"`
		IPBlock *struct {
			CIDR string `json:"cidr"`
		} `json:"ipBlock"`
	}
	type policy struct {
		PodSelector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"podSelector"`
		PolicyTypes []string `json:"policyTypes"`
		Ingress     []struct {
			From  []peer `json:"from"`
			Ports []struct {
				Port any `json:"port"`
			} `json:"ports"`
		} `json:"ingress"`
	}
	read := func(r rendered) policy {
		var p policy
		if err := json.Unmarshal(r.mustFind(t, "NetworkPolicy", "seedance").Spec, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	matches := func(selector, labels map[string]string) bool {
		for k, v := range selector {
			if labels[k] != v {
				return false
			}
		}
		return len(selector) > 0
	}
	r := render(t, filepath.Join(deployDir(t), "second-scheduler"))
	p := read(r)
	podLabels := func(kind, name string) map[string]string {
		var d struct {
			Template struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			} `json:"template"`
		}
		if err := json.Unmarshal(r.mustFind(t, kind, name).Spec, &d); err != nil {
			t.Fatal(err)
		}
		return d.Template.Metadata.Labels
	}
	if !matches(p.PodSelector.MatchLabels, podLabels("StatefulSet", "seedance")) || !has(p.PolicyTypes, "Ingress") {
		t.Errorf("NetworkPolicy seedance %+v does not select the server's pods for Ingress", p.PodSelector)
	}
	scheduler, prometheus := false, false
	for _, in := range p.Ingress {
		port := len(in.Ports) == 1 && fmt.Sprint(in.Ports[0].Port) == "8443"
		for _, f := range in.From {
			if f.PodSelector != nil && f.NamespaceSelector == nil &&
				matches(f.PodSelector.MatchLabels, podLabels("Deployment", "seedance-scheduler")) {
				scheduler = port
			}
			if f.PodSelector != nil && f.NamespaceSelector != nil && f.PodSelector.MatchLabels["app.kubernetes.io/name"] == "prometheus" {
				prometheus = port
			}
		}
	}
	if !scheduler || !prometheus {
		t.Errorf("NetworkPolicy seedance: admits the second scheduler's pods %v, Prometheus %v on 8443; want both", scheduler, prometheus)
	}
	ipBlock := false
	for _, in := range read(render(t, deployDir(t))).Ingress {
		for _, f := range in.From {
			ipBlock = ipBlock || f.IPBlock != nil
		}
	}
	if !ipBlock {
		t.Error("deploy/'s NetworkPolicy has no ipBlock for a kube-scheduler on the control-plane nodes' host network")
	}
}

// deploy/cert-manager/ issues, from one CA, the Secrets the server and the second scheduler mount:
// seedance-tls (server auth, the Service's names) and seedance-scheduler-client (client auth).
func TestCertManagerIssuesTheMountedSecrets(t *testing.T) {
	r := render(t, filepath.Join(deployDir(t), "cert-manager"))
	type certificate struct {
		SecretName string   `json:"secretName"`
		IsCA       bool     `json:"isCA"`
		DNSNames   []string `json:"dnsNames"`
		Usages     []string `json:"usages"`
		IssuerRef  struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"issuerRef"`
	}
	certs := map[string]certificate{}
	for _, o := range r.objects {
		if o.Kind == "Certificate" {
			var c certificate
			if err := json.Unmarshal(o.Spec, &c); err != nil {
				t.Fatal(err)
			}
			certs[c.SecretName] = c
		}
		if o.Metadata.Namespace != "seedance-system" && o.Kind != "Namespace" {
			t.Errorf("%s/%s is not in seedance-system", o.Kind, o.Metadata.Name)
		}
	}
	server, client := certs["seedance-tls"], certs["seedance-scheduler-client"]
	if !has(server.Usages, "server auth") || !has(server.DNSNames, "seedance.seedance-system.svc") {
		t.Errorf("Certificate for seedance-tls %+v: want server auth for seedance.seedance-system.svc", server)
	}
	if !has(client.Usages, "client auth") {
		t.Errorf("Certificate for seedance-scheduler-client %+v: want client auth", client)
	}
	if server.IssuerRef != client.IssuerRef || server.IssuerRef.Name == "" {
		t.Errorf("the two leaves have issuers %+v and %+v: the server's ca.crt must verify the client's", server.IssuerRef, client.IssuerRef)
	}
	var issuer struct {
		CA *struct {
			SecretName string `json:"secretName"`
		} `json:"ca"`
	}
	if err := json.Unmarshal(r.mustFind(t, "Issuer", server.IssuerRef.Name).Spec, &issuer); err != nil || issuer.CA == nil ||
		!certs[issuer.CA.SecretName].IsCA {
		t.Errorf("Issuer %s is not a CA issuer over a Certificate with isCA", server.IssuerRef.Name)
	}
	// The Secrets are the ones the pods mount.
	mounted := map[string]bool{}
	second := render(t, filepath.Join(deployDir(t), "second-scheduler"))
	for _, d := range []struct{ kind, name string }{{"StatefulSet", "seedance"}, {"Deployment", "seedance-scheduler"}} {
		for _, v := range deployment(t, second, d.kind, d.name).Template.Spec.Volumes {
			if v.Secret != nil {
				mounted[v.Secret.SecretName] = true
			}
		}
	}
	for _, name := range []string{"seedance-tls", "seedance-scheduler-client"} {
		if !mounted[name] {
			t.Errorf("Secret %s is issued but mounted by no pod", name)
		}
	}
}

// recipeCerts runs the shipped openssl recipe (scripts/seedance-certs.sh) into a new folder, with
// 127.0.0.1 among the server's names, and returns the folder: ca.crt, tls.crt, tls.key,
// scheduler.crt, scheduler.key.
func recipeCerts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(deployDir(t), "..", "scripts", "seedance-certs.sh")
	if out, err := exec.Command("bash", script, dir, "--san", "IP:127.0.0.1", "--days", "2").CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	return dir
}

// servingCerts is the folder recipeCerts made for the Secret seedance-tls of the running test.
var servingCerts string

// writeServingCert fills the Secret seedance-tls as deploy/README.md makes it (tls.crt, tls.key,
// ca.crt from scripts/seedance-certs.sh).
func writeServingCert(t *testing.T, dir string) {
	t.Helper()
	servingCerts = recipeCerts(t)
	for _, name := range []string{"tls.crt", "tls.key", "ca.crt"} {
		b, err := os.ReadFile(filepath.Join(servingCerts, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

