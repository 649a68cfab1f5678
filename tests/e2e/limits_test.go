package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// Deeply nested expressions are refused with 54001 instead of overflowing
// the server's stack, a long IN list still works, and the server keeps
// serving other sessions throughout.
func TestExpressionDepthLimit(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, other, "CREATE TABLE kv (k BIGINT PRIMARY KEY, v BIGINT)", "INSERT INTO kv VALUES (1, 10)")

	deep := "SELECT " + strings.Repeat("(", 200_000) + "1" + strings.Repeat(")", 200_000)
	pe := wantExecCode(t, conn, deep, "54001")
	if pe != nil && !strings.Contains(pe.Message, "stack depth limit exceeded") {
		t.Errorf("message %q", pe.Message)
	}
	wantRows(t, other, "SELECT v FROM kv WHERE k = 1", "10")

	wantExecCode(t, conn, "SELECT "+strings.Repeat("1+", 20_000)+"1", "54001")
	wantRows(t, other, "SELECT v FROM kv WHERE k = 1", "10")

	// Within the bound, nesting works as before.
	wantRows(t, conn, "SELECT "+strings.Repeat("(", 1000)+"7"+strings.Repeat(")", 1000), "7")

	items := make([]string, 100_000)
	for i := range items {
		items[i] = fmt.Sprint(i + 2)
	}
	wantRows(t, conn, "SELECT k FROM kv WHERE v IN ("+strings.Join(items, ",")+")", "1")
	wantRows(t, conn, "SELECT count(*) FROM kv WHERE v NOT IN ("+strings.Join(items, ",")+")", "0")
}

// An ad-hoc query that would build more rows than query_max_memory allows
// is refused with 53200, a long one stops at statement_timeout (the same
// checks see cancellation), and the server keeps serving others.
func TestQueryMemoryLimit(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	other := srv.Conn(t)
	exec(t, conn, "CREATE TABLE big3 (id BIGINT PRIMARY KEY, g BIGINT)")
	var rows []string
	for i := 0; i < 3000; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d)", i, i%3))
	}
	exec(t, conn, "INSERT INTO big3 VALUES "+strings.Join(rows, ","))
	exec(t, conn, "SET query_max_memory = '8MB'")
	pe := wantExecCode(t, conn, "SELECT count(*) FROM big3 a, big3 b, big3 c", "53200")
	if pe != nil && !strings.Contains(pe.Message, "8MB") {
		t.Errorf("message %q does not name the limit", pe.Message)
	}
	wantRows(t, other, "SELECT count(*) FROM big3", "3000")
	// Within the limit the same join shape answers.
	wantRows(t, conn, "SELECT count(*) FROM big3 a JOIN big3 b ON a.id = b.id", "3000")

	exec(t, conn, "SET query_max_memory = 0", "SET statement_timeout = '300ms'")
	wantExecCode(t, conn, "SELECT count(*) FROM big3 a, big3 b, big3 c WHERE a.g + b.g + c.g = 100", "57014")
	wantExecCode(t, conn, "SET query_max_memory = 'lots'", "22023")
	wantRows(t, other, "SELECT count(*) FROM big3", "3000")
}
