package binder

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/exec"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
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
		cat := NewOfflineCatalog()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out string
			var err error
			switch d.Cmd {
			case "exec":
				err = cat.Exec(d.Input)
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

// explain renders a statement's plan: a view's streaming dataflow, or a
// query's plan.
func (c *OfflineCatalog) explain(sql string) (string, error) {
	st, err := front.Parse(sql)
	if err != nil {
		return "", err
	}
	if n, ok := st.Node.(*front.CreateMaterializedView); ok {
		root, err := c.bindView(st, n)
		if err != nil {
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

func (c *OfflineCatalog) schema(sql string) (string, error) {
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
