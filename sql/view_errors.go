package sql

import (
	"strings"

	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// viewErrorColumns are the columns of the system table streamdb_view_errors:
// the latest rows that failed inside each view (the last 20 per view), with
// the view's count of failed rows so far (failed_rows, the same on each of
// its rows). A view skips such rows unless it was created WITH (on_error =
// 'fail'), in which case it stopped at the last one listed.
var viewErrorColumns = []types.Column{
	{Name: "view", Type: types.Text}, {Name: "failed_rows", Type: types.Int8},
	{Name: "stream", Type: types.Text}, {Name: "seq", Type: types.Int8},
	{Name: "operator", Type: types.Text}, {Name: "sqlstate", Type: types.Text},
	{Name: "error", Type: types.Text}, {Name: "at", Type: types.Timestamptz},
}

func init() {
	// Unqualified names of pgSystemTables are looked up under pg_catalog.
	pgSystemTables["pg_catalog.streamdb_view_errors"] = pgSystemTableDef{cols: viewErrorColumns, rows: (*Engine).viewErrorRows}
}

func (e *Engine) viewErrorRows() []types.Row {
	var rows []types.Row
	for _, v := range e.rt.ViewErrors() {
		stream, seq := types.Null, types.Null
		if v.Stream != "" {
			stream = types.NewString(v.Stream)
		}
		if v.Seq != 0 {
			seq = types.NewInt(int64(v.Seq))
		}
		rows = append(rows, types.Row{
			types.NewString(v.View), types.NewInt(int64(v.Count)), stream, seq,
			types.NewString(v.Operator), types.NewString(v.Code), types.NewString(v.Message), types.NewTime(v.At),
		})
	}
	return rows
}

// checkViewOptions validates a CREATE MATERIALIZED VIEW's WITH options
// and returns them as the descriptor stores them.
func checkViewOptions(opts map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range opts {
		switch k {
		case exec.OnErrorOption:
			v = strings.ToLower(v)
			if v != exec.OnErrorSkip && v != exec.OnErrorFail {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"on_error\": %q", v).
					WithHint("Use 'skip' (the default: a row that fails inside the view is skipped and listed in streamdb_view_errors) or 'fail' (the view stops at such a row).")
			}
			out[k] = v
		case uidsOption:
			if _, err := parseUIDs(v); err != nil {
				return nil, err
			}
			out[k] = v
		case allowNonRestoredOption:
			// An instruction to ALTER, not a property of the view.
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized parameter %q", k).
				WithHint("A materialized view takes WITH (on_error = 'skip' | 'fail', uids = 'with_query, ...'); ALTER also takes allow_non_restored_state = true.")
		}
	}
	return out, nil
}

// checkViewsRunning refuses a query that reads a materialized view whose
// dataflow stopped (exec.Runtime.ViewFailure): its stored rows are as of
// before the failure, and serving them as current would hide it.
func (e *Engine) checkViewsRunning(root plan.Node) error {
	for _, src := range plan.Sources(root) {
		if src.Kind != catalog.KindView {
			continue
		}
		if err := e.rt.ViewFailure(src.ID); err != nil {
			return err
		}
	}
	return nil
}
