package meta

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/catalog"
	"streamdb/exec"
)

// runIndex runs testdata/ddl's commands of indexes:
//
//	index name=O ix=I cols=C,... [unique]   CreateIndex I on object O
//	drop-index name=O ixs=I,...             DropIndexes of O's indexes
//
// Each shows O's stored indexes (name, slot, state table) and how many
// times the dataflows were restarted (the catalog reloaded).
func (env *ddlEnv) runIndex(t *testing.T, d *datadriven.TestData, name string) string {
	var sb strings.Builder
	obj := env.lookup(t, name)
	reloads := env.rt.reloads
	switch d.Cmd {
	case "index":
		var ixName, cols string
		d.ScanArgs(t, "ix", &ixName)
		d.ScanArgs(t, "cols", &cols)
		ix := catalog.Index{Name: ixName, Unique: d.HasArg("unique")}
		for _, c := range strings.Split(cols, ",") {
			ix.Columns = append(ix.Columns, catalog.IndexColumn{Name: c})
		}
		dup, err := env.ddl.CreateIndex(obj, ix)
		if err != nil {
			sb.WriteString(errLine(err))
		}
		if dup != nil {
			fmt.Fprintf(&sb, "duplicate key in row %v\n", dup)
		}
	case "drop-index":
		var names string
		d.ScanArgs(t, "ixs", &names)
		var drops []IndexDrop
		for _, n := range strings.Split(names, ",") {
			for _, ix := range obj.Indexes {
				if ix.Name == n {
					drops = append(drops, IndexDrop{Object: obj, Index: ix})
				}
			}
		}
		if err := env.ddl.DropIndexes(drops); err != nil {
			sb.WriteString(errLine(err))
		}
	}
	stored := storedNames(t, env.store)[name]
	fmt.Fprintf(&sb, "%s (%s) indexes:", name, stored.Kind)
	for _, ix := range stored.Indexes {
		fmt.Fprintf(&sb, " %s(seq %d, table %d)", ix.Name, ix.Seq, ix.Table)
	}
	fmt.Fprintf(&sb, "\nrestarts: %d\n", env.rt.reloads-reloads)
	return sb.String()
}

func TestFreeIndexSlot(t *testing.T) {
	d := &catalog.Descriptor{Indexes: []catalog.Index{{Seq: 1}, {Seq: 3}}}
	if seq, table := FreeIndexSlot(d); seq != 2 || table != exec.FirstIndexTable+2 {
		t.Errorf("FreeIndexSlot = %d, %d; want 2, %d", seq, table, exec.FirstIndexTable+2)
	}
}
