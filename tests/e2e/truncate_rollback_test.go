package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestRollbackRefusesPurgedInput: ROLLBACK TO SAVEPOINT checks the input of
// every view and table the restored state reads, not only the positions
// its metadata lists. A savepoint whose metadata lists no positions (as
// one cut while its views were not running) does not hold purges back;
// once the input after its stored positions is purged, rolling back to it
// fails with 55000 naming what is missing, and nothing changes.
func TestRollbackRefusesPurgedInput(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		"CREATE STREAM ev (k int, v bigint) WITH (retention = 'consumed')",
		"CREATE MATERIALIZED VIEW agg AS SELECT count(*) AS n, sum(v) AS s FROM ev",
		"CREATE TABLE acct (id int PRIMARY KEY, bal bigint)",
		"INSERT INTO acct VALUES (1, 0), (2, 0), (3, 0)")
	total := 0
	round := func(n int) {
		t.Helper()
		publishMany(t, js, "ev", n, func(i int) string { return fmt.Sprintf(`{"k":%d,"v":1}`, i) })
		for i := 0; i < n; i++ {
			exec(t, conn, fmt.Sprintf("UPDATE acct SET bal = bal + 1 WHERE id = %d", i%3+1))
		}
		total += n
		flush(t, conn)
	}
	check := func(when string) {
		t.Helper()
		wantRows(t, conn, "SELECT n, s FROM agg", fmt.Sprintf("%d %d", total, total))
		wantRows(t, conn, "SELECT sum(bal) FROM acct", fmt.Sprint(total))
	}
	round(30)
	exec(t, conn, "SAVEPOINT stripped")
	round(30)
	check("before the restart")

	// Strip the savepoint's metadata of its positions.
	srv.Stop(t)
	metaPath := filepath.Join(srv.DataDir, "savepoints", "stripped", "_metadata.json")
	data, err := os.ReadFile(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if _, ok := meta["positions"]; !ok {
		t.Fatalf("%s has no positions field: %s", metaPath, data)
	}
	delete(meta, "positions")
	if data, err = json.Marshal(meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metaPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	conn = srv.Conn(t)
	check("after the restart")

	// Nothing holds ev or acct's changelog back at the savepoint now.
	round(30)
	purgePassed(t, conn, js, "stripped")
	pollDrained(t, js, "ev", 0)
	if n, first := jsState(t, js, "ev"); first <= 30 {
		t.Fatalf("ev holds %d messages from %d: the input the savepoint needs was not purged", n, first)
	}

	pe := wantExecCode(t, conn, "ROLLBACK TO SAVEPOINT stripped", "55000")
	if pe != nil && (!strings.Contains(pe.Message, "cannot roll back") || !strings.Contains(pe.Message, "purged")) {
		t.Errorf("the refusal does not say what is missing: %s", pe.Message)
	}
	// Nothing changed: the views and the table answer as before and go on.
	check("after the refused rollback")
	round(10)
	check("after more input")

	// A savepoint whose input is kept still rolls back.
	exec(t, conn, "SAVEPOINT kept")
	before := total
	round(10)
	exec(t, conn, "ROLLBACK TO SAVEPOINT kept")
	flush(t, conn)
	// agg restarts from the savepoint and reads ev on; acct's changelog
	// replays too, so both answer with every change.
	check("after ROLLBACK TO SAVEPOINT kept")
	if total == before {
		t.Fatal("no input after the savepoint")
	}
}
