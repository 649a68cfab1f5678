package sql

import (
	"context"

	"streamdb/sqlerr"
)

// interruptedBy returns the error for a statement whose context ctx is
// done (timeout reports statement_timeout ending it), or nil.
func interruptedBy(ctx context.Context, timeout func() bool) error {
	switch {
	case ctx.Err() == nil:
		return nil
	case timeout():
		return errStatementTimeout()
	}
	return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
}

// errStatementTimeout is PostgreSQL's error for a statement that
// statement_timeout ended.
func errStatementTimeout() error {
	return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
}
