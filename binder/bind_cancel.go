package binder

import (
	"context"

	"streamdb/sqlerr"
)

// Binding honours the statement's cancellation: statement_timeout, a
// client's CancelRequest, pg_cancel_backend / pg_terminate_backend and the
// client hanging up all cancel the context Prepare is given, and a bind
// that runs long (a long IN list, a wide UNION chain, subqueries nested
// thousands deep) stops at the next check. Checks are coarse and cheap:
// at each SELECT and each set-operation arm, and every bindCheckEvery
// expressions.

// bindCheckEvery is how many bindExpr calls pass between two looks at the
// statement's context.
const bindCheckEvery = 256

// bindContext makes binding with p stop once ctx is done, until the
// returned function is called (when the bind is over: a plan prepared now
// may bind again when it runs, under another context).
func (p *Params) bindContext(ctx context.Context) (done func()) {
	p.ctx = ctx
	return func() { p.ctx = nil }
}

// interrupted returns an error once the statement being bound is
// cancelled. sql's Prepare gives it PostgreSQL's message for the cause.
func (p *Params) interrupted() error {
	if p == nil || p.ctx == nil || p.ctx.Err() == nil {
		return nil
	}
	return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
}

// tick counts one bindExpr call and looks at the context every
// bindCheckEvery calls.
func (p *Params) tick() error {
	if p == nil || p.ctx == nil {
		return nil
	}
	p.ticks++
	if p.ticks%bindCheckEvery != 0 {
		return nil
	}
	return p.interrupted()
}
