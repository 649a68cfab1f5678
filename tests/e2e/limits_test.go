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
