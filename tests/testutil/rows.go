package testutil

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// SortedRows runs q over the simple protocol and returns its rows in
// PostgreSQL's text format, columns joined by "|", NULL as "NULL", sorted:
// the form in which two servers' answers to one query compare equal.
func SortedRows(t testing.TB, conn *pgx.Conn, q string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals := rows.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	sort.Strings(out)
	return out
}

// RowsDiff compares the rows of q on conn with those of pgQuery on pg (a
// PostgreSQL computing the same result), as SortedRows gives them: it
// returns "" when they are equal, else both counts and both row lists.
func RowsDiff(t testing.TB, conn *pgx.Conn, q string, pg *pgx.Conn, pgQuery string) string {
	t.Helper()
	got, want := SortedRows(t, conn, q), SortedRows(t, pg, pgQuery)
	if slices.Equal(got, want) {
		return ""
	}
	return fmt.Sprintf("%d rows, PostgreSQL %d\ngot  %s\nwant %s", len(got), len(want), strings.Join(got, " "), strings.Join(want, " "))
}
