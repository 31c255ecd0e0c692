package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// canonicalObjects splits a multi-document render into its objects, each as JSON with sorted
// keys, the list sorted: two renders that differ only in document order compare equal.
func canonicalObjects(t *testing.T, where string, y []byte) []string {
	t.Helper()
	var out []string
	for i, doc := range bytes.Split(append([]byte("\n"), y...), []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: document %d: %v", where, i+1, err)
		}
		var v any
		if err := json.Unmarshal(j, &v); err != nil {
			t.Fatalf("%s: document %d: %v", where, i+1, err)
		}
		c, _ := json.Marshal(v)
		out = append(out, string(c))
	}
	sort.Strings(out)
	return out
}

// `kubectl kustomize` (deploy/README.md's command) renders each kustomization, to the same objects
// as kustomize's library, whose render the other tests here and tests/k8s's scenarios run.
func TestKubectlKustomizeRendersTheSameObjects(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("SEEDANCE_REQUIRE_PEERS") == "1" {
			t.Fatal("kubectl is not on PATH and SEEDANCE_REQUIRE_PEERS=1")
		}
		t.Skip("kubectl is not on PATH")
	}
	for _, sub := range []string{".", "second-scheduler", "cert-manager"} {
		dir := filepath.Join(deployDir(t), sub)
		var stderr bytes.Buffer
		cmd := exec.Command(kubectl, "kustomize", dir)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
		}
		got := canonicalObjects(t, "kubectl kustomize "+dir, out)
		want := canonicalObjects(t, "kustomize's library on "+dir, render(t, dir).yaml)
		if len(got) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("kubectl kustomize %s: %d objects, the library's render %d; they differ:\nkubectl:\n%s\nlibrary:\n%s",
				dir, len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// The image runs as non-root: the Containerfile's last USER is its SEEDANCE_UID, not 0, and the
// StatefulSet runs the pod as that same uid with runAsNonRoot (a uid the image does not have
// would leave the ledger volume's directory unwritable; root would defeat the read-only root).
func TestImageRunsAsTheStatefulSetsNonRootUser(t *testing.T) {
	path := filepath.Join(deployDir(t), "..", "Containerfile")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	arg := regexp.MustCompile(`(?m)^ARG SEEDANCE_UID=(\d+)\s*$`).FindSubmatch(b)
	if arg == nil {
		t.Fatalf("%s: no ARG SEEDANCE_UID=N", path)
	}
	uid, _ := strconv.ParseInt(string(arg[1]), 10, 64)
	users := regexp.MustCompile(`(?m)^USER\s+(\S+)\s*$`).FindAllSubmatch(b, -1)
	if len(users) == 0 {
		t.Fatalf("%s: no USER line: the image would run as root", path)
	}
	if last := string(users[len(users)-1][1]); last != "${SEEDANCE_UID}:${SEEDANCE_UID}" {
		t.Errorf("%s: the last USER is %q, want ${SEEDANCE_UID}:${SEEDANCE_UID}", path, last)
	}
	if uid == 0 {
		t.Errorf("%s: SEEDANCE_UID is 0 (root)", path)
	}
	for _, dir := range []string{deployDir(t), filepath.Join(deployDir(t), "second-scheduler")} {
		sc := deployment(t, render(t, dir), "StatefulSet", "seedance").Template.Spec.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != uid {
			got, _ := json.Marshal(sc)
			t.Errorf("%s: StatefulSet seedance's securityContext %s, want runAsNonRoot true and runAsUser %d (the image's user)", dir, got, uid)
		}
	}
}
