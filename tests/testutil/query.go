package testutil

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// QueryText runs sql with the simple protocol and returns the column names
// and every value in the server's text format, with null standing for SQL
// NULL.
func QueryText(conn *pgx.Conn, timeout time.Duration, sql, null string) ([]string, [][]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return nil, nil, err
	}
	if len(results) != 1 {
		return nil, nil, fmt.Errorf("%d results, want 1", len(results))
	}
	r := results[0]
	if r.Err != nil {
		return nil, nil, r.Err
	}
	var cols []string
	for _, fd := range r.FieldDescriptions {
		cols = append(cols, fd.Name)
	}
	var rows [][]string
	for _, raw := range r.Rows {
		row := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				row[i] = null
			} else {
				row[i] = string(v)
			}
		}
		rows = append(rows, row)
	}
	return cols, rows, nil
}

// ViewDefinition returns the definition SHOW MATERIALIZED VIEWS gives for
// the view name, failing the test if there is none.
func ViewDefinition(t testing.TB, conn *pgx.Conn, name string) string {
	t.Helper()
	_, rows, err := QueryText(conn, time.Minute, "SHOW MATERIALIZED VIEWS", "NULL")
	if err != nil {
		t.Fatalf("SHOW MATERIALIZED VIEWS: %v", err)
	}
	for _, r := range rows {
		if len(r) >= 2 && r[0] == name {
			return r[1]
		}
	}
	t.Fatalf("SHOW MATERIALIZED VIEWS has no %s", name)
	return ""
}

// Scalar returns the one value of a one-row, one-column query in the
// server's text format ("NULL" for NULL), failing the test otherwise.
func Scalar(t testing.TB, conn *pgx.Conn, sql string) string {
	t.Helper()
	_, rows, err := QueryText(conn, time.Minute, sql, "NULL")
	if err != nil {
		t.Fatalf("%s: %v", OneLine(sql), err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %q", OneLine(sql), rows)
	}
	return rows[0][0]
}
