package sql

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// TestSessionDataDriven runs statements through sessions of an Engine
// without a node (fakeEngine): the files under testdata/session are the
// frontend's unit tests, with PostgreSQL 15's results. Commands:
//
//	catalog                  CREATE STREAM / TABLE / MATERIALIZED VIEW: add to the catalog
//	                         (as bound offline: a materialized view without
//	                         populating it, which DDL in exec cannot do)
//	exec [session=N] [user=U]
//	                         statements, each run in session N (opened as
//	                         user U at its first use; default session and
//	                         the bootstrap user otherwise; user=U alone is
//	                         session U): rows, then the
//	                         command tag or the error, then the session's
//	                         transaction status
//	authorize [session=N] [user=U]
//	                         statements: whether the session's user may run
//	                         each (the privilege check made when a
//	                         statement runs), without running it
//	cursor [session=N] rows=K
//	                         DECLARE ... CURSOR FOR <query>: declares the
//	                         cursor as DECLARE does, over the rows 1..K of
//	                         one int8 column n in place of the query's
//	                         (a query of a materialized view needs its
//	                         dataflow; DECLARE in exec reads tables)
//	copy [session=N] [user=U] [hex]
//	                         one COPY statement (the first line) with the
//	                         further lines as the client's data (hex for a
//	                         binary COPY FROM): the data COPY TO wrote
//	                         (hex when binary), the tag or the error, then
//	                         the transaction status
//	describe [session=N] [params=T,T]
//	                         one statement prepared with the parameter
//	                         types given: its parameter and result types
//
// A statement that fails prints "error <SQLSTATE>: <message>".
// Regenerate the expected output with `go test ./sql -run SessionDataDriven -rewrite`.
func TestSessionDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/session", func(t *testing.T, path string) {
		f := newFakeEngine(t)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			name, user := "default", ""
			if d.HasArg("session") {
				d.ScanArgs(t, "session", &name)
			}
			if d.HasArg("user") {
				d.ScanArgs(t, "user", &user)
				if !d.HasArg("session") {
					name = user
				}
			}
			switch d.Cmd {
			case "catalog":
				for _, stmt := range front.Split(d.Input) {
					if err := f.create(stmt); err != nil {
						return errorLine(err)
					}
				}
				return "ok\n"
			case "exec":
				s := f.session(name, user)
				var sb strings.Builder
				for _, stmt := range front.Split(d.Input) {
					sb.WriteString(run(s, stmt, nil, nil))
					f.detachTables()
				}
				sb.WriteString("status " + string(s.TxStatus()) + "\n")
				return sb.String()
			case "authorize":
				s := f.session(name, user)
				var sb strings.Builder
				for _, stmt := range front.Split(d.Input) {
					st, err := front.Parse(stmt)
					if err == nil {
						err = s.permitted(st)
					}
					if err != nil {
						sb.WriteString(errorLine(err))
						continue
					}
					sb.WriteString("ok\n")
				}
				return sb.String()
			case "cursor":
				var k int
				d.ScanArgs(t, "rows", &k)
				return declareRows(f.session(name, user), d.Input, k)
			case "copy":
				return runCopy(f.session(name, user), d.Input, d.HasArg("hex"))
			case "describe":
				s := f.session(name, user)
				var ts []types.Type
				if d.HasArg("params") {
					var names []string
					d.ScanArgs(t, "params", &names)
					for _, n := range names {
						typ, err := types.Parse(n)
						if err != nil {
							t.Fatalf("%s: type %q: %v", d.Pos, n, err)
						}
						ts = append(ts, typ)
					}
				}
				return describe(s, d.Input, ts)
			default:
				t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
			}
			return ""
		})
	})
}

// declareRows declares the cursor of a DECLARE statement over the rows
// 1..k, with the checks DECLARE makes before it runs its query.
func declareRows(s *session, sql string, k int) string {
	st, err := front.Parse(sql)
	if err != nil {
		return errorLine(err)
	}
	n, ok := st.Node.(*front.DeclareCursor)
	if !ok {
		return fmt.Sprintf("takes DECLARE, not %T\n", st.Node)
	}
	if s.tx == nil && !n.Hold {
		return errorLine(sqlerr.New(sqlerr.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks"))
	}
	cs := s.cursors()
	if _, dup := cs[n.Name]; dup {
		return errorLine(sqlerr.New(sqlerr.DuplicateCursor, "cursor %q already exists", n.Name))
	}
	rows := make([]types.Row, k)
	for i := range rows {
		rows[i] = types.Row{types.NewInt(int64(i + 1))}
	}
	cs[n.Name] = &feedCursor{cols: []types.Column{{Name: "n", Type: types.Int8}}, buf: rowBuffer{rows: rows},
		hold: n.Hold, tx: s.tx, scroll: n.Scroll, spSeq: s.cursorSeq()}
	return "DECLARE CURSOR\n"
}

// errorLine prints a statement's error as the expected output shows it.
func errorLine(err error) string {
	if sqlerr.Code(err) == "" {
		return fmt.Sprintf("error (no SQLSTATE): %v\n", err)
	}
	e := sqlerr.From(err)
	return fmt.Sprintf("error %s: %s\n", e.Code, e.Message)
}
