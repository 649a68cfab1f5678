package e2e

import (
	"fmt"
	"testing"

	"streamdb/tests/testutil"
)

// TestSelectFromStream: an ad-hoc SELECT over a stream reads what
// JetStream holds on its subject (a message that does not decode is
// skipped, as views skip it), with LIMIT, filters, aggregates, joins and
// ORDER BY as over a table; past query_max_memory it fails with 53200 and
// the session keeps serving.
func TestSelectFromStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM s1 (k int, v text) WITH (subject = 'preview.s1')",
		"CREATE TABLE names (k int PRIMARY KEY, name text)",
		"INSERT INTO names VALUES (1, 'one'), (2, 'two')")
	wantRows(t, conn, "SELECT * FROM s1")
	wantRows(t, conn, "SELECT count(*) FROM s1", "0")
	testutil.Publish(t, js, "preview.s1", `{"k": 1, "v": "a"}`, `not json`, `{"k": 2, "v": "b"}`)
	publishMany(t, js, "preview.s1", 200, func(i int) string { return fmt.Sprintf(`{"k": %d, "v": "x%d"}`, 10+i, i) })

	wantRows(t, conn, "SELECT * FROM s1 LIMIT 2", "1 a", "2 b")
	wantRows(t, conn, "SELECT k FROM s1 LIMIT 1 OFFSET 2", "10")
	wantRows(t, conn, "SELECT count(*), min(k), max(k) FROM s1", "202 1 209")
	wantRows(t, conn, "SELECT s1.k, n.name FROM s1 JOIN names n ON n.k = s1.k ORDER BY s1.k", "1 one", "2 two")
	wantRows(t, conn, "SELECT v FROM s1 WHERE k > 205 ORDER BY k DESC LIMIT 2", "x199", "x198")
	wantRows(t, conn, "SELECT k FROM s1 WHERE k IN (SELECT k FROM names) ORDER BY k", "1", "2")

	// In a transaction block it reads what is published (not the block's
	// own uncommitted inserts).
	exec(t, conn, "BEGIN", "INSERT INTO s1 VALUES (999, 'pending')")
	wantRows(t, conn, "SELECT count(*) FROM s1", "202")
	exec(t, conn, "COMMIT")
	wantRows(t, conn, "SELECT count(*) FROM s1 WHERE k = 999", "1")

	exec(t, conn, "SET query_max_memory = '4kB'")
	wantExecCode(t, conn, "SELECT * FROM s1", "53200")
	wantRows(t, conn, "SELECT * FROM s1 LIMIT 1", "1 a")
	exec(t, conn, "RESET query_max_memory")

	// A materialized view over the stream still reads it as a stream.
	exec(t, conn, "CREATE MATERIALIZED VIEW c AS SELECT count(*) AS n FROM s1")
	flush(t, conn)
	wantRows(t, conn, "SELECT n FROM c", "203")
}
