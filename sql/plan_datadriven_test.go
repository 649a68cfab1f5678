package sql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"
)

// TestPlanDataDriven binds SQL against a catalog held in memory and prints
// plans, with no server, NATS or Pebble: the files under testdata/plan are
// the binder's and planner's unit tests. Commands:
//
//	exec                      CREATE STREAM / TABLE / MATERIALIZED VIEW: add to the catalog
//	explain                   SELECT: the ad-hoc plan; CREATE MATERIALIZED VIEW: the streaming plan
//	schema                    SELECT: the result's columns and types
//
// A statement the binder refuses prints "error <SQLSTATE>: <message>".
// Regenerate the expected output with `go test ./sql -run PlanDataDriven -rewrite`.
func TestPlanDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/plan", func(t *testing.T, path string) {
		cat := newMemCatalog()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out string
			var err error
			switch d.Cmd {
			case "exec":
				err = cat.exec(d.Input)
				out = "ok"
			case "explain":
				out, err = cat.explain(d.Input)
			case "schema":
				out, err = cat.schema(d.Input)
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			}
			if err != nil {
				return errorLine(err)
			}
			return strings.TrimRight(out, "\n") + "\n"
		})
	})
}

func errorLine(err error) string {
	if sqlerr.Code(err) == "" {
		return fmt.Sprintf("error (no SQLSTATE): %v\n", err)
	}
	e := sqlerr.From(err)
	return fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
}

// memCatalog is a catalogReader over descriptors held in memory, built by
// the same checks CREATE runs (sourceDescriptor, viewDescriptor).
type memCatalog struct {
	objs   map[string]*storage.Descriptor
	nextID uint32
}

func newMemCatalog() *memCatalog {
	return &memCatalog{objs: map[string]*storage.Descriptor{}, nextID: 1}
}

func (c *memCatalog) lookup(name string) (*storage.Descriptor, bool) {
	d, ok := c.objs[name]
	return d, ok
}

func (c *memCatalog) systemTable(string) (*storage.Descriptor, func() []types.Row, bool) {
	return nil, nil, false
}

func (c *memCatalog) bind(st *front.Statement) (plan.Node, error) {
	var e Engine
	return e.bindQueryIn(c, st, &boundParams{order: st.Params, stmt: st})
}

func (c *memCatalog) add(d *storage.Descriptor) error {
	if _, ok := c.objs[d.Name]; ok {
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", d.Name)
	}
	d.ID = c.nextID
	c.nextID++
	c.objs[d.Name] = d
	return nil
}

func (c *memCatalog) exec(sql string) error {
	st, err := front.Parse(sql)
	if err != nil {
		return err
	}
	switch n := st.Node.(type) {
	case *front.CreateSource:
		isTable := n.Kind == front.KindTable && !n.AppendOnly
		d, err := sourceDescriptor(n, isTable)
		if err != nil {
			return err
		}
		if isTable {
			d.Kind = storage.KindTable
		}
		return c.add(d)
	case *front.CreateMaterializedView:
		root, err := c.bind(viewQuery(st, n))
		if err != nil {
			return err
		}
		if err := checkStreamable(root); err != nil {
			return err
		}
		opts, err := checkViewOptions(n.Options)
		if err != nil {
			return err
		}
		d, err := viewDescriptor(n, root, opts)
		if err != nil {
			return err
		}
		return c.add(d)
	}
	return fmt.Errorf("exec takes CREATE STREAM, TABLE or MATERIALIZED VIEW, not %T", st.Node)
}

func (c *memCatalog) explain(sql string) (string, error) {
	st, err := front.Parse(sql)
	if err != nil {
		return "", err
	}
	if n, ok := st.Node.(*front.CreateMaterializedView); ok {
		root, err := c.bind(viewQuery(st, n))
		if err != nil {
			return "", err
		}
		if err := checkStreamable(root); err != nil {
			return "", err
		}
		return exec.ExplainStreaming(root), nil
	}
	root, err := c.bind(st)
	if err != nil {
		return "", err
	}
	return plan.Explain(root), nil
}

func (c *memCatalog) schema(sql string) (string, error) {
	st, err := front.Parse(sql)
	if err != nil {
		return "", err
	}
	root, err := c.bind(st)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, col := range root.Schema() {
		fmt.Fprintf(&sb, "%s %s\n", col.Name, col.Type)
	}
	return sb.String(), nil
}
