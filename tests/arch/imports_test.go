// Package arch checks the package layering that docs/design.md states:
// imports point down its list of packages, and a few pairs the design
// keeps apart stay apart. It reads the import graph with go list, so it
// needs no server.
package arch

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// layers is docs/design.md's package list, top first: a package may
// import packages of its own layer or of layers below it.
var layers = [][]string{
	{"cmd/streamdb"},
	{"sql"},
	{"binder"},
	{"pgcatalog/rewrite"},
	{"front"},
	{"meta"},
	{"node"},
	{"cluster/control"},
	{"admin", "pgwire"},
	{"checkpoint", "sink"},
	{"exec"},
	{"broker", "pgcdc"},
	{"plan"},
	{"storage", "storage/keyenc"},
	{"pgcatalog", "pgcopy"},
	{"cluster"},
	{"catalog"},
	{"expr", "types", "sqlerr", "ha"},
	{"config", "metrics", "faults", "gcpace", "nexmark"},
}

// forbidden are imports the design rules out although the list allows
// them: checkpoint reaches the runtime only through its EpochSource
// interface (TestCheckpointSeesEpochs also rules out indirect imports).
var forbidden = map[[2]string]string{
	{"checkpoint", "exec"}:           "checkpoint sees epochs through its EpochSource interface, not exec's types",
	{"pgcatalog", "sql"}:             "pgcatalog reaches the engine through an interface it defines, which sql implements",
	{"pgcatalog", "storage"}:         "pgcatalog reads the catalog through its interface, not from Pebble",
	{"pgcatalog", "broker"}:          "pgcatalog reads the catalog through its interface, not from NATS",
	{"pgcatalog", "node"}:            "pgcatalog reaches the engine through an interface it defines, not the node",
	{"pgcatalog/rewrite", "meta"}:    "rewrite reads the engine through pgcatalog.Engine and the session through its Session interface",
	{"pgcatalog/rewrite", "storage"}: "rewrite reads the catalog through pgcatalog.Engine, not from Pebble",
	{"pgcatalog/rewrite", "broker"}:  "rewrite reads the catalog through pgcatalog.Engine, not from NATS",
	{"pgcatalog/rewrite", "node"}:    "rewrite reaches the engine through pgcatalog.Engine, not the node",
	{"meta", "sql"}:                  "meta is the catalog service below the frontend: sql calls meta, never the other way",
	{"meta", "front"}:                "meta works on bound plans and catalog objects, not statements",
	{"meta", "pgwire"}:               "meta serves the frontend, not clients: it never speaks the wire protocol",
	{"binder", "pgwire"}:             "the binder turns statements into plans; sessions and the wire are sql's",
	{"binder", "node"}:               "the binder reads the catalog through binder.Catalog, not the node",
	{"binder", "storage"}:            "the binder reads the catalog through binder.Catalog, not from Pebble",
	{"binder", "storage/keyenc"}:     "the binder reads the catalog through binder.Catalog, not from Pebble",
	{"binder", "broker"}:             "the binder reads the catalog through binder.Catalog, not from NATS",
	{"binder", "checkpoint"}:         "the binder plans statements; checkpoints are meta's",
	{"binder", "sink"}:               "the binder plans statements; sinks are meta's",
	{"sql", "cluster"}:               "sql sees the cluster through its ClusterMembers interface, which cmd/streamdb adapts: cluster speaks NATS",
}

func TestImportsPointDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "streamdb/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layerOf := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layerOf[p] = i
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	seen := 0
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg := strings.TrimPrefix(fields[0], "streamdb/")
		if strings.HasPrefix(pkg, "tests/") || strings.HasPrefix(pkg, "bench") {
			continue
		}
		from, ok := layerOf[pkg]
		if !ok {
			t.Errorf("package %s is not in docs/design.md's package list (and this test's layers): add it there", pkg)
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			dep, ours := strings.CutPrefix(imp, "streamdb/")
			if !ours {
				continue
			}
			if why, bad := forbidden[[2]string{pkg, dep}]; bad {
				t.Errorf("%s imports %s: %s", pkg, dep, why)
			}
			to, ok := layerOf[dep]
			if ok && to < from {
				t.Errorf("%s imports %s, a package above it in docs/design.md's list", pkg, dep)
			}
		}
	}
	if seen < len(layerOf)-2 {
		t.Errorf("go list showed %d of the %d packages", seen, len(layerOf))
	}
}

// TestCheckpointSeesEpochs: checkpoint reaches the runtime only through
// its EpochSource, which node adapts the runtime to. Neither checkpoint,
// nor a package it imports, nor its tests may import exec.
func TestCheckpointSeesEpochs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "streamdb/checkpoint").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := false
	for _, line := range strings.Split(string(out), "\n") {
		// Test builds list a package as "path [streamdb/checkpoint.test]".
		pkg, _, _ := strings.Cut(line, " ")
		switch pkg {
		case "streamdb/checkpoint":
			seen = true
		case "streamdb/exec":
			t.Errorf("checkpoint (with its tests) depends on exec (%s): it must see epochs through checkpoint.EpochSource; fake one in tests", line)
		}
	}
	if !seen {
		t.Errorf("go list -deps -test showed no streamdb/checkpoint:\n%s", out)
	}
}
