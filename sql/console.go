package sql

import (
	"context"
	"errors"
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/admin"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The web console (admin package) reads the server through SQL run as
// the logged-in user, so privileges and errors are exactly those of the
// PostgreSQL port. What SQL does not show yet (a view's dataflow) has a
// method of its own here.

// ConsoleQuery implements admin.Backend: it runs one statement as user in
// a session of its own and returns the rows as PostgreSQL's text output.
func (e *Engine) ConsoleQuery(ctx context.Context, user, query string) (*admin.Result, error) {
	return e.consoleRun(ctx, user, query, 0)
}

// ConsoleSelect implements admin.Backend: the console's query page. It
// runs only a query (its rows are all it can give), as user, in a
// read-only session (a query may still call a function that writes, such
// as nextval), and keeps the first maxRows rows.
func (e *Engine) ConsoleSelect(ctx context.Context, user, query string, maxRows int) (*admin.Result, error) {
	st, err := front.Parse(query)
	if err != nil {
		return nil, err
	}
	switch st.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the console's query page runs only queries (SELECT, VALUES, TABLE); run other statements in psql")
	}
	return e.consoleExec(ctx, user, query, maxRows, true)
}

// errEnoughRows stops a console query once it has the rows it shows.
var errEnoughRows = errors.New("enough rows")

// consoleRun runs query as user; maxRows > 0 keeps only the first ones.
func (e *Engine) consoleRun(ctx context.Context, user, query string, maxRows int) (*admin.Result, error) {
	return e.consoleExec(ctx, user, query, maxRows, false)
}

// consoleExec is consoleRun, and with readOnly it refuses whatever would
// change data.
func (e *Engine) consoleExec(ctx context.Context, user, query string, maxRows int, readOnly bool) (*admin.Result, error) {
	if err := e.checkLogin(user); err != nil {
		return nil, err
	}
	sess := newSession(e, map[string]string{"user": user, "application_name": "streamdb console"})
	sess.alwaysReadOnly = readOnly
	defer sess.Close()
	p, err := sess.Prepare(ctx, query, nil)
	if err != nil {
		return nil, err
	}
	cols := p.Columns()
	res := &admin.Result{}
	for _, c := range cols {
		res.Columns = append(res.Columns, c.Name)
	}
	w := &consoleRows{cols: cols, res: res, max: maxRows}
	res.Tag, err = p.Execute(ctx, nil, w)
	if errors.Is(err, errEnoughRows) {
		res.Truncated, res.Tag, err = true, "", nil
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// consoleRows collects result rows as text; NULL becomes "".
type consoleRows struct {
	cols []types.Column
	res  *admin.Result
	max  int // 0: every row
}

func (w *consoleRows) WriteRow(row types.Row) error {
	if w.max > 0 && len(w.res.Rows) == w.max {
		return errEnoughRows
	}
	out := make([]string, len(row))
	for i, d := range row {
		if !d.IsNull() {
			out[i] = types.FormatText(d, w.cols[i].Type)
		}
	}
	w.res.Rows = append(w.res.Rows, out)
	return nil
}

// ConsoleDataflow implements admin.Backend: the streaming dataflow of
// view name, as EXPLAIN CREATE MATERIALIZED VIEW shows it for its query.
func (e *Engine) ConsoleDataflow(ctx context.Context, user, name string) (string, error) {
	d, ok := e.lookup(name)
	if !ok || d.Kind != catalog.KindView {
		return "", sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", name)
	}
	root, err := e.viewPlan(d)
	if err != nil {
		return "", fmt.Errorf("planning view %q: %w", name, err)
	}
	return e.explainStreaming(root), nil
}
