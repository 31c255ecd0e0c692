// render DIR: prints the kustomization in DIR as `kubectl kustomize DIR` would, with kustomize's
// own library (the version tests/deploy pins). tests/k8s's as-shipped scenarios apply its output
// to the real control plane (tests/k8s/README.md). Exit 2 when DIR does not render.
package main

import (
	"fmt"
	"os"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: render DIR (a kustomization, e.g. deploy/second-scheduler)")
		os.Exit(2)
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "kustomize %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	out, err := m.AsYaml()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kustomize %s: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	os.Stdout.Write(out)
}
