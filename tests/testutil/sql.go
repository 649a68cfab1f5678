package testutil

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Context returns a context that ends after d or when the test ends.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ExecTimeout bounds each statement MustExec runs.
const ExecTimeout = 2 * time.Minute

// ExecSimple runs one statement with the simple protocol (as psql does),
// bounded by timeout.
func ExecSimple(conn *pgx.Conn, timeout time.Duration, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

// MustExec runs statements with the simple protocol and fails the test
// on the first error.
func MustExec(t testing.TB, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, sql := range sqls {
		if err := ExecSimple(conn, ExecTimeout, sql); err != nil {
			t.Fatalf("%s: %v", OneLine(sql), err)
		}
	}
}

// OneLine is sql on one line, cut at 200 bytes, for failure messages.
func OneLine(sql string) string {
	s := strings.Join(strings.Fields(sql), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// SQLState is err's SQLSTATE, or "" when err is no server error.
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// WantCode checks that err is a server error with SQLSTATE code and
// returns it (nil, with the test marked failed, otherwise). what names
// the statement in the failure message.
func WantCode(t testing.TB, err error, code, what string) *pgconn.PgError {
	t.Helper()
	if what != "" {
		what += ": "
	}
	if err == nil {
		t.Errorf("%swant SQLSTATE %s, got success", what, code)
		return nil
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Errorf("%swant SQLSTATE %s, got %v", what, code, err)
		return nil
	}
	if pe.Code != code {
		t.Errorf("%swant SQLSTATE %s, got %s: %s", what, code, pe.Code, pe.Message)
	}
	return pe
}
