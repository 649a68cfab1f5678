package sql

import (
	"context"
	"fmt"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/expr"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// SELECT pg_cancel_backend(pid) and SELECT pg_terminate_backend(pid): the
// call alone in a SELECT without FROM, its argument any expression of
// constants and parameters. Other forms (over pg_stat_activity, in a
// WHERE) are refused. As in PostgreSQL, a superuser may signal any session,
// others only their own user's; the answer is false when no session has
// that pid.

// prepareBackendSignal prepares st when it is such a call.
func (s *session) prepareBackendSignal(st *front.Statement) (p *prepared, ok bool, err error) {
	sel, isSel := st.Node.(*ast.SelectStmt)
	if !isSel || sel.From != nil || sel.Fields == nil || len(sel.Fields.Fields) != 1 || sel.Where != nil {
		return nil, false, nil
	}
	call, isCall := sel.Fields.Fields[0].Expr.(*ast.FuncCallExpr)
	if !isCall || (call.FnName.L != "pg_cancel_backend" && call.FnName.L != "pg_terminate_backend") {
		return nil, false, nil
	}
	name := call.FnName.L
	if len(call.Args) != 1 {
		return nil, true, sqlerr.New(sqlerr.UndefinedFunction, "function %s takes one argument, the pid", name)
	}
	params := binder.NewParams(st, nil)
	params.Declare(nil, types.Int4)
	b := binder.NewExprBinder(params)
	arg, err := b.Bind(call.Args[0], nil)
	if err != nil {
		return nil, true, err
	}
	if arg, err = expr.CastWithModifier(arg, types.Int8, types.Modifier{}, false); err != nil {
		return nil, true, err
	}
	colName := name
	if f := sel.Fields.Fields[0]; f.AsName.L != "" {
		colName = f.AsName.O
	}
	cols := []types.Column{{Name: colName, Type: types.Bool}}
	return &prepared{params: params, cols: cols, run: func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		bound, err := expr.BindParams(arg, vals)
		if err != nil {
			return "", err
		}
		v, err := bound.Eval(nil)
		if err != nil {
			return "", err
		}
		out := types.Null
		if !v.IsNull() {
			signaled, err := s.signalBackend(ctx, v.I, name == "pg_terminate_backend")
			if err != nil {
				return "", err
			}
			out = types.NewBool(signaled)
		}
		if err := w.WriteRow(types.Row{out}); err != nil {
			return "", err
		}
		return selectTag(1), nil
	}}, true, nil
}

// signalBackend cancels the statement of, or terminates, the session with
// the given pid.
func (s *session) signalBackend(ctx context.Context, pid int64, terminate bool) (bool, error) {
	e := s.e.backends.byPID(pid)
	if e == nil {
		pgwire.Notice(ctx, fmt.Sprintf("PID %d is not a streamdb backend process", pid), "")
		return false, nil
	}
	if !s.roleSuperuser() && e.user != s.user {
		verb := "cancel queries of"
		if terminate {
			verb = "terminate"
		}
		return false, sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to %s this backend", verb).
			WithHint("Only a superuser or a session of the same role may do it.")
	}
	if terminate {
		e.b.Terminate()
	} else {
		e.b.Cancel()
	}
	return true, nil
}
