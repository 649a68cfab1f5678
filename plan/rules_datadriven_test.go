package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/catalog"
	"streamdb/plan"
	"streamdb/sql"
	"streamdb/sqlerr"
)

// TestRulesDataDriven binds views against a catalog held in memory and
// prints their plans through the streaming rules, with no server. Commands:
//
//	exec                 CREATE STREAM / TABLE / MATERIALIZED VIEW: add to the catalog
//	rules [format=N]     CREATE MATERIALIZED VIEW: the bound plan, then the plan
//	                     after each rule of format N (default the latest) that ran
//	where                CREATE MATERIALIZED VIEW: each WHERE filter as bound, then
//	                     the plan after each WHERE rule (plan.WhereRules) that ran
//	record               CREATE MATERIALIZED VIEW: the operator ids of its plan record
//	stateful             CREATE MATERIALIZED VIEW: the operators of its streaming plan
//	                     that keep state, in the order their state is numbered, and
//	                     which of them re-send their output after an ALTER
//
// Regenerate the expected output with `go test ./plan -run RulesDataDriven -rewrite`.
func TestRulesDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		cat := sql.NewOfflineCatalog()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "exec":
				if err := cat.Exec(d.Input); err != nil {
					return errorLine(err)
				}
				return "ok\n"
			case "rules":
				format := catalog.DataflowLatest
				if d.HasArg("format") {
					var n int
					d.ScanArgs(t, "format", &n)
					format = catalog.FormatVersion(n)
				}
				root, err := cat.BindView(d.Input)
				if err != nil {
					return errorLine(err)
				}
				var sb strings.Builder
				sb.WriteString("bound:\n" + indent(plan.Explain(root)))
				plan.RewriteStreaming(root, format, func(rule string, after plan.Node) {
					sb.WriteString(rule + ":\n" + indent(plan.Explain(after)))
				})
				return sb.String()
			case "where":
				var sb strings.Builder
				cat.OnWhere = func(f *plan.Filter) func(string, plan.Node) {
					sb.WriteString("where:\n" + indent(plan.Explain(f)))
					return func(rule string, after plan.Node) {
						sb.WriteString(rule + ":\n" + indent(plan.Explain(after)))
					}
				}
				defer func() { cat.OnWhere = nil }()
				if _, err := cat.BindView(d.Input); err != nil {
					return errorLine(err)
				}
				return sb.String()
			case "stateful":
				root, err := cat.BindView(d.Input)
				if err != nil {
					return errorLine(err)
				}
				stream := plan.RewriteStreaming(root, catalog.DataflowLatest, nil)
				var sb strings.Builder
				for _, n := range plan.StatefulNodes(stream) {
					fmt.Fprintf(&sb, "%s reemit=%v\n", n.Describe(), plan.ReemitNeeded(stream, n))
				}
				if names := plan.UnkeptSources(stream); len(names) > 0 {
					fmt.Fprintf(&sb, "rows kept by no operator, from: %s\n", strings.Join(names, ", "))
				}
				return sb.String()
			case "record":
				root, err := cat.BindView(d.Input)
				if err != nil {
					return errorLine(err)
				}
				data, err := plan.Encode(root, cat.Lookup)
				if err != nil {
					return errorLine(err)
				}
				ids, err := plan.OperatorIDs(data)
				if err != nil {
					return errorLine(err)
				}
				return ids
			}
			t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			return ""
		})
	})
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ") + "\n"
}

func errorLine(err error) string {
	if sqlerr.Code(err) == "" {
		return fmt.Sprintf("error (no SQLSTATE): %v\n", err)
	}
	e := sqlerr.From(err)
	return fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
}
