// Package nodeorm runs the Node.js ORMs knex, Sequelize and Kysely end to
// end: orm.js builds a schema with each ORM's migration/schema API, then
// reads and writes rows with transactions that commit and roll back. The
// same script runs against streamdb and against PostgreSQL 15, and the
// final rows must agree.
package nodeorm

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestNodeORMs runs orm.js against a fresh streamdb and a fresh
// PostgreSQL and compares the rows each leaves.
func TestNodeORMs(t *testing.T) {
	node := testutil.NodeSetup(t, ".", "kysely")
	pg := testutil.StartPostgres(t)
	want := runScript(t, node, pg.DSN(), "PostgreSQL")
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	got := runScript(t, node, srv.DSN(), "streamdb")
	for table, rows := range want {
		if !reflect.DeepEqual(got[table], rows) {
			t.Errorf("rows of %s:\n streamdb:   %s\n PostgreSQL: %s", table, got[table], rows)
		}
	}
	for table := range got {
		if _, ok := want[table]; !ok {
			t.Errorf("streamdb has rows of %s, PostgreSQL none", table)
		}
	}
}

// runScript runs orm.js against dsn and returns the final rows it
// printed, as JSON text per table.
func runScript(t *testing.T, node, dsn, engine string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "orm.js")
	cmd.Env = append(os.Environ(), "STREAMDB_DSN="+dsn, "TZ=UTC")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node orm.js against %s failed: %v\n%s", engine, err, out)
	}
	t.Logf("node orm.js against %s:\n%s", engine, out)
	var tables map[string]json.RawMessage
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ROWS "); ok {
			if err := json.Unmarshal([]byte(rest), &tables); err != nil {
				t.Fatalf("orm.js against %s printed rows that are not JSON: %v\n%s", engine, err, rest)
			}
		}
	}
	if len(tables) == 0 {
		t.Fatalf("orm.js against %s printed no rows", engine)
	}
	rows := map[string]string{}
	for k, v := range tables {
		rows[k] = string(v)
	}
	return rows
}
