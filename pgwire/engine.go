// Package pgwire serves the PostgreSQL wire protocol (v3) on top of an
// Engine. It owns framing, startup, authentication, the simple and extended
// query flows, value encoding (text and binary) and cancellation; it knows
// nothing about SQL beyond what the Engine tells it.
package pgwire

import (
	"context"
	"time"

	"streamdb/types"
)

// Engine creates one Session per client connection.
type Engine interface {
	// NewSession is called after startup with the client's startup
	// parameters (user, database, application_name, ...).
	NewSession(ctx context.Context, params map[string]string) (Session, error)
}

// Session executes statements for one connection. Calls on one Session are
// never concurrent.
type Session interface {
	// Split breaks a simple-query string into its statements, respecting
	// quotes and comments. Empty statements are dropped.
	Split(sql string) ([]string, error)
	// Prepare parses and plans one statement. paramTypes holds the types the
	// client declared in Parse (types.Unknown where it gave 0); the
	// Prepared statement may resolve more parameters than were declared.
	Prepare(ctx context.Context, sql string, paramTypes []types.Type) (Prepared, error)
	// TxStatus is the ReadyForQuery status byte: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus() byte
	// Close releases the session's resources; the connection is gone.
	Close()
}

// CursorDescriber is implemented by sessions whose SQL cursors (DECLARE)
// are portals too, as in PostgreSQL: Describe of a portal that the
// protocol did not bind answers with the cursor's row shape.
type CursorDescriber interface {
	CursorColumns(name string) ([]types.Column, bool)
}

// IdleInTransactionTimeouter is implemented by sessions that bound how long
// they may sit idle inside a transaction block (PostgreSQL's
// idle_in_transaction_session_timeout): past it, the connection ends with
// FATAL 25P03. Zero means no bound.
type IdleInTransactionTimeouter interface {
	IdleInTransactionTimeout() time.Duration
}

// Prepared is a parsed and planned statement.
type Prepared interface {
	// ParamTypes returns one type per $n parameter (index 0 is $1).
	ParamTypes() []types.Type
	// Columns returns the result columns, or nil for statements that return
	// no rows (then Describe answers NoData).
	Columns() []types.Column
	// Execute runs the statement with the given parameter values (already
	// decoded to the types of ParamTypes) and writes result rows to w as it
	// goes. It returns the CommandComplete tag, e.g. "SELECT 5",
	// "INSERT 0 2", "CREATE MATERIALIZED VIEW". Errors should be
	// *sqlerr.Error values so that the SQLSTATE reaches the client.
	// ctx is cancelled when the client sends a CancelRequest for it.
	Execute(ctx context.Context, params []types.Datum, w RowWriter) (tag string, err error)
}

// RowWriter receives result rows. The row slice may be reused by the caller
// after WriteRow returns.
type RowWriter interface {
	WriteRow(row types.Row) error
}
