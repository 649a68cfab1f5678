package binder_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sql"
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
// Regenerate the expected output with `go test ./binder -run PlanDataDriven -rewrite`.
func TestPlanDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/plan", func(t *testing.T, path string) {
		cat := sql.NewOfflineCatalog()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out string
			var err error
			switch d.Cmd {
			case "exec":
				err = cat.Exec(d.Input)
				out = "ok"
			case "explain":
				out, err = explain(cat, d.Input)
			case "schema":
				out, err = schema(cat, d.Input)
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

// explain renders a statement's plan: a view's streaming dataflow, or a
// query's plan.
func explain(c *binder.OfflineCatalog, text string) (string, error) {
	st, err := front.Parse(text)
	if err != nil {
		return "", err
	}
	if n, ok := st.Node.(*front.CreateMaterializedView); ok {
		root, err := c.BindViewStatement(st, n)
		if err != nil {
			return "", err
		}
		return exec.ExplainStreaming(root), nil
	}
	root, err := c.Bind(text)
	if err != nil {
		return "", err
	}
	return plan.Explain(root), nil
}

func schema(c *binder.OfflineCatalog, text string) (string, error) {
	root, err := c.Bind(text)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, col := range root.Schema() {
		fmt.Fprintf(&sb, "%s %s\n", col.Name, col.Type)
	}
	return sb.String(), nil
}

// errorLine prints a statement's error as the expected output shows it.
func errorLine(err error) string {
	if sqlerr.Code(err) == "" {
		return fmt.Sprintf("error (no SQLSTATE): %v\n", err)
	}
	e := sqlerr.From(err)
	return fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
}
