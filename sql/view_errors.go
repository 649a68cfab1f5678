package sql

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"streamdb/binder"
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
//
// An error's message quotes the row's values ("invalid input syntax for
// type integer: \"111-11-1111\""), which come from the view's inputs, not
// from what the view shows: only superusers, the view's owner and roles
// that may SELECT every relation the view reads see it. Others see the
// row with error "<insufficient privilege>", as PostgreSQL's
// pg_stat_activity shows another role's query.
var viewErrorColumns = []types.Column{
	{Name: "view", Type: types.Text}, {Name: "failed_rows", Type: types.Int8},
	{Name: "stream", Type: types.Text}, {Name: "seq", Type: types.Int8},
	{Name: "operator", Type: types.Text}, {Name: "sqlstate", Type: types.Text},
	{Name: "error", Type: types.Text}, {Name: "at", Type: types.Timestamptz},
}

func init() {
	// Unqualified names of pgSystemTables are looked up under pg_catalog.
	pgSystemTables["pg_catalog.streamdb_view_errors"] = pgSystemTableDef{cols: viewErrorColumns, rowsFor: (*Engine).viewErrorRows}
}

// insufficientPrivilege stands for a value the reader may not see.
const insufficientPrivilege = "<insufficient privilege>"

func (e *Engine) viewErrorRows(r rowReader) []types.Row {
	var rows []types.Row
	mayRead := map[string]bool{}
	for _, v := range e.rt.ViewErrors() {
		key := v.View + "\x00" + v.Stream
		may, ok := mayRead[key]
		if !ok {
			may = e.mayReadInputs(r, v.View, v.Stream)
			mayRead[key] = may
		}
		message := v.Message
		if !may {
			message = insufficientPrivilege
		}
		stream, seq := types.Null, types.Null
		if v.Stream != "" {
			stream = types.NewString(v.Stream)
		}
		if v.Seq != 0 {
			seq = types.NewInt(int64(v.Seq))
		}
		rows = append(rows, types.Row{
			types.NewString(v.View), types.NewInt(int64(v.Count)), stream, seq,
			types.NewString(v.Operator), types.NewString(v.Code), types.NewString(message), types.NewTime(v.At),
		})
	}
	return rows
}

// mayReadInputs reports whether r may see the values of a row of view
// that failed (coming from source, "" when not known): r is a superuser
// or owns the view, or may SELECT every relation the view reads and the
// source.
func (e *Engine) mayReadInputs(r rowReader, view, source string) bool {
	d, ok := e.lookup(view)
	if !ok || d.Kind != catalog.KindView {
		return r.holdsAny(nil) // a view being dropped: superusers only
	}
	if r.holdsAny(d) {
		return true
	}
	names := d.DependsOn
	if source != "" {
		names = append(slices.Clip(names), source)
	}
	for _, name := range names {
		in, ok := e.lookup(name)
		if !ok || !r.holdsAny(in, "SELECT") {
			return false
		}
	}
	return true
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
		case binder.UIDsOption:
			if _, err := binder.ParseUIDs(v); err != nil {
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
		switch src.Kind {
		case catalog.KindView:
			if err := e.rt.ViewFailure(src.ID); err != nil {
				return err
			}
		case catalog.KindTable:
			if err := e.tableFailure(src); err != nil {
				return err
			}
		}
	}
	return nil
}

// tableFailure is the error reads and writes of table d get once its
// dataflow stopped (nil while it runs). Its state is then as of the
// failure and no longer follows its changelog: reads would show stale
// rows as current, and a write would be published and acknowledged but
// never show (after --restore-from a checkpoint whose position the
// changelog no longer holds, exec.ErrInputLost).
func (e *Engine) tableFailure(d *catalog.Descriptor) error {
	err := e.rt.PipelineError(d.ID)
	if err == nil {
		return nil
	}
	cause := sqlerr.From(err)
	out := &sqlerr.Error{Code: cause.Code, Message: fmt.Sprintf("table %q cannot be read or written: %v", d.Name, err), Hint: cause.Hint}
	if errors.Is(err, exec.ErrInputLost) {
		out.Hint = fmt.Sprintf("The state was restored from a point older than the table's changelog in JetStream still holds. Restart with --restore-from a newer checkpoint or savepoint, or DROP TABLE %s and create and fill it again.", d.Name)
	}
	return out
}
