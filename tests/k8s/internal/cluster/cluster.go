package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
)

// Options configure Start.
type Options struct {
	// Dir receives etcd's data, kubeconfig, ca.crt, token and the logs. It is created.
	Dir string
	// APIServerFlags are extra kube-apiserver flags (for example --watch-cache=false).
	APIServerFlags []string
	// Log receives the control plane's own log lines; nil discards them.
	Log io.Writer
}

// Cluster is a running etcd + kube-apiserver.
type Cluster struct {
	Dir        string
	Kubeconfig string // a kubeconfig with the server URL, the CA and a bearer token (system:masters)
	// SchedulerKubeconfig authenticates as user system:kube-scheduler, as a control plane's own
	// kube-scheduler does (kubeadm's /etc/kubernetes/scheduler.conf): the bootstrap RBAC grants it
	// ClusterRoles system:kube-scheduler and system:volume-scheduler, nothing more.
	SchedulerKubeconfig string
	CAFile              string // the CA bundle that verifies the API server's serving certificate
	TokenFile           string // the bearer token, one line
	CAData              []byte // the CA bundle's PEM
	Server              string // https://127.0.0.1:PORT
	EtcdURL             string // http://127.0.0.1:PORT
	Config              *rest.Config
	Client              *kubernetes.Clientset
	Etcd                *clientv3.Client

	tb      *programTB
	etcd    *embed.Etcd
	apiStop func()
}

// Start runs embedded etcd and Kubernetes' kube-apiserver test server as a cluster runs it:
// authorization Node,RBAC and the default admission plugins, none disabled. The harness's own
// token is system:masters (it creates nodes and pods, as a cluster's controllers and users would);
// Seedance and kube-scheduler run under the identities deploy/ gives them (internal/shipped). No
// controller-manager runs here, so the harness plays its part where admission needs it:
// ServiceAccount admission needs each namespace's `default` ServiceAccount (EnsureNamespaces
// creates it) and TaintNodesByCondition taints new nodes not-ready (CreateNodes lifts the taint
// once the node is Ready). It writes a kubeconfig that authenticates with the bearer token and
// returns once the API server answers with that kubeconfig.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("cluster: Options.Dir is empty")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &Cluster{Dir: dir, tb: newProgramTB("seedance-controlplane", o.Log)}
	// The API server and the scheduler log through klog's global logger too.
	if o.Log != nil {
		klog.LogToStderr(false)
		klog.SetOutput(o.Log)
	}
	ok := false
	defer func() {
		if !ok {
			c.Stop()
		}
	}()

	if err := c.startEtcd(filepath.Join(dir, "etcd")); err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}

	token, err := randomHex(32)
	if err != nil {
		return nil, err
	}
	c.TokenFile = filepath.Join(dir, "token")
	if err := os.WriteFile(c.TokenFile, []byte(token+"\n"), 0o600); err != nil {
		return nil, err
	}
	schedToken, err := randomHex(32)
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(dir, "tokens.csv")
	// token,user,uid,"groups": the harness's user is a cluster admin; system:kube-scheduler is the
	// user a control plane's kube-scheduler authenticates as (no group beyond system:authenticated).
	if err := os.WriteFile(tokens, []byte(token+`,seedance-harness,seedance-harness,"system:masters"`+"\n"+
		schedToken+",system:kube-scheduler,system:kube-scheduler\n"), 0o600); err != nil {
		return nil, err
	}

	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = []string{c.EtcdURL}
	flags := append([]string{"--token-auth-file=" + tokens, "--authorization-mode=Node,RBAC"}, o.APIServerFlags...)
	opts := &apiservertesting.TestServerInstanceOptions{EnableCertAuth: true, DisableInvariantChecks: true}
	started := make(chan error, 1)
	var server apiservertesting.TestServer
	// StartTestServer reports fatal setup errors through tb.Fatal, which ends its goroutine.
	go func() {
		returned := false
		defer func() {
			if !returned {
				started <- fmt.Errorf("kube-apiserver test server stopped during setup (see the log)")
			}
		}()
		s, err := apiservertesting.StartTestServer(c.tb, opts, flags, storage)
		returned = true
		server = s
		started <- err
	}()
	select {
	case err := <-started:
		if err != nil {
			return nil, fmt.Errorf("kube-apiserver: %w", err)
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	c.apiStop = server.TearDownFn
	c.Etcd = server.EtcdClient

	// The serving certificate and its CA, as kube-apiserver wrote them.
	bundle, err := os.ReadFile(filepath.Join(server.TmpDir, "apiserver.crt"))
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver serving certificate: %w", err)
	}
	c.CAFile = filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(c.CAFile, bundle, 0o644); err != nil {
		return nil, err
	}
	u, err := url.Parse(server.ClientConfig.Host)
	if err != nil {
		return nil, err
	}
	c.Server = "https://" + u.Host
	c.CAData = bundle

	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := clientcmdapi.NewConfig()
	kc.Clusters["seedance"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: bundle}
	kc.AuthInfos["seedance-harness"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["seedance"] = &clientcmdapi.Context{Cluster: "seedance", AuthInfo: "seedance-harness"}
	kc.CurrentContext = "seedance"
	if err := clientcmd.WriteToFile(*kc, c.Kubeconfig); err != nil {
		return nil, err
	}
	c.SchedulerKubeconfig = filepath.Join(dir, "scheduler.conf")
	kc.AuthInfos["seedance-harness"] = &clientcmdapi.AuthInfo{Token: schedToken}
	if err := clientcmd.WriteToFile(*kc, c.SchedulerKubeconfig); err != nil {
		return nil, err
	}

	// Prove the kubeconfig works as an outside client would use it.
	c.Config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	c.Config.QPS, c.Config.Burst = 1000, 2000
	c.Client, err = kubernetes.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("kube-apiserver with the written kubeconfig: %w", err)
	}
	ok = true
	return c, nil
}

func (c *Cluster) startEtcd(dataDir string) error {
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	cfg := embed.NewConfig()
	cfg.Name = "seedance"
	cfg.Dir = dataDir
	cu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	pu, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(filepath.Dir(dataDir), "etcd.log")}
	cfg.UnsafeNoFsync = true // a throwaway test store
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	c.etcd = e
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		return fmt.Errorf("not ready after 60 s")
	}
	c.EtcdURL = cu.String()
	return nil
}

// Stop tears down kube-apiserver and etcd and removes the API server's temp dir.
func (c *Cluster) Stop() {
	if c.apiStop != nil {
		c.apiStop()
		c.apiStop = nil
	}
	c.tb.Close()
	if c.etcd != nil {
		c.etcd.Close()
		c.etcd = nil
	}
}

// ReadyInfo is what WriteReadyFile writes: everything a peer needs to use the control plane.
type ReadyInfo struct {
	Server     string `json:"server"`
	Kubeconfig string `json:"kubeconfig"`
	CAFile     string `json:"ca_file"`
	TokenFile  string `json:"token_file"`
	Etcd       string `json:"etcd"`
	Scheduler  string `json:"scheduler,omitempty"` // the scheduler's profile name, if one runs
	PID        int    `json:"pid"`
	// The seedance server deploy/ runs (serve): its HTTPS URL, the CA of its serving certificate
	// and the write token (Secret seedance-token).
	Seedance       string `json:"seedance,omitempty"`
	SeedanceCAFile string `json:"seedance_ca_file,omitempty"`
	SeedanceToken  string `json:"seedance_token,omitempty"`
}

// WriteReadyFile writes info as JSON to path atomically (a temp file renamed into place), so a
// reader that sees the file sees all of it.
func WriteReadyFile(path string, info ReadyInfo) error {
	b, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
