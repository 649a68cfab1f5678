package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"streamdb/tests/testutil"
)

// TestCompatRestoreAlter: the checkpoints an earlier streamdb wrote are
// points today's server restores and rolls back to, and the views it loads
// from them can be altered keeping their state. For each generation:
//
//   - --restore-from a copy of the generation's last DDL checkpoint (in
//     gen1 and gen2 taken before its events were read) replays the rest
//     from JetStream and ends at the rows the generation recorded;
//   - ALTER MATERIALIZED VIEW per_k adds a HAVING that keeps every group:
//     EXPLAIN ALTER keeps its aggregate, and with new input it and the
//     view over it stay equal to fresh views of the same queries;
//   - ROLLBACK TO CHECKPOINT of that old checkpoint, in the data
//     directory, brings per_k's old query back and, once replayed, the
//     same rows;
//   - a generation's savepoint (gen3 on) reads the rows the generation
//     recorded (AS OF SAVEPOINT), and ROLLBACK TO SAVEPOINT of it brings
//     back the views as they were before the generation's ALTER and
//     replays to the same rows;
//   - the views of the state each ROLLBACK TO restores move to newer
//     formats as they load (sql.migrateViewFormats), when the
//     generation's are older than their migratedFormats.
func TestCompatRestoreAlter(t *testing.T) {
	forEachGeneration(t, restoreAlterGeneration)
}

func restoreAlterGeneration(t *testing.T, name string) {
	gen, dataDir := loadGeneration(t, name)
	// moving: some view of the generation moves to a newer format at
	// start, and so again when ROLLBACK TO restores its older state.
	moving := false
	for n, f := range viewFormats(t, dataDir) {
		moving = moving || migratedFormats[name][n] != f
	}
	raw, err := os.ReadFile(filepath.Join(dataDir, "checkpoint-record.json"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s predates checkpoint records: there is no checkpoint to restore by its id", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	var record struct {
		LastDDL struct {
			ID    int `json:"id"`
			Epoch int `json:"epoch"`
		} `json:"last_ddl"`
	}
	if err := json.Unmarshal(raw, &record); err != nil || record.LastDDL.ID == 0 {
		t.Fatalf("%s: no last DDL checkpoint in checkpoint-record.json (%v): %s", name, err, raw)
	}
	old := fmt.Sprintf("chk-%010d", record.LastDDL.ID)
	point := filepath.Join(t.TempDir(), old)
	if err := os.CopyFS(point, os.DirFS(filepath.Join(dataDir, "checkpoints", old))); err != nil {
		t.Fatal(err)
	}

	srv := testutil.StartServer(t, testutil.ServerOptions{
		DataDir: dataDir,
		Args:    []string{"--restore-from", point},
		// The generation's own checkpoints stay for ROLLBACK TO.
		Env: []string{"STREAMDB_STATE_CHECKPOINTS_NUM_RETAINED=100"},
	})
	conn := srv.Conn(t)
	if logs := srv.Logs(); !strings.Contains(logs, "recovering from checkpoint") || !strings.Contains(logs, point) {
		t.Fatalf("the server did not restore %s:\n%s", point, logs)
	}
	exec(t, conn, "FLUSH")
	for n, want := range gen.Rows {
		if got := rows(t, conn, "SELECT * FROM "+n); !slices.Equal(got, want) {
			t.Errorf("view %s restored from %s of %s and replayed:\n got %v\nwant %v", n, old, name, got, want)
		}
	}

	restored := testutil.ViewDefinition(t, conn, "per_k")
	altered := views["per_k"] + alteredSuffix
	explain := strings.Join(rows(t, conn, "EXPLAIN ALTER MATERIALIZED VIEW per_k AS "+altered), "\n")
	if !strings.Contains(explain, "kept") || strings.Contains(explain, "backfilled") || strings.Contains(explain, "refused") {
		t.Fatalf("EXPLAIN ALTER of %s's per_k does not keep its aggregate:\n%s", name, explain)
	}
	exec(t, conn, "ALTER MATERIALIZED VIEW per_k AS "+altered,
		"CREATE MATERIALIZED VIEW per_k_fresh AS "+altered,
		"CREATE MATERIALIZED VIEW over_view_fresh AS "+strings.ReplaceAll(views["over_view"], "per_k", "per_k_fresh"))
	publish(t, srv, gen.Events, 250)
	exec(t, conn, "FLUSH")
	kept := map[string][]string{}
	for _, n := range []string{"per_k", "over_view"} {
		got, fresh := rows(t, conn, "SELECT * FROM "+n), rows(t, conn, "SELECT * FROM "+n+"_fresh")
		if !slices.Equal(got, fresh) {
			t.Errorf("%s of %s after ALTER and new input differs from a fresh view:\n got   %v\n fresh %v", n, name, got, fresh)
		}
		if slices.Equal(got, gen.Rows[n]) {
			t.Errorf("%s of %s did not change after new input: %v", n, name, got)
		}
		kept[n] = got
	}

	moves := strings.Count(srv.Logs(), movedLog)
	exec(t, conn, fmt.Sprintf("ROLLBACK TO CHECKPOINT %d", record.LastDDL.ID), "FLUSH")
	if strings.Count(srv.Logs(), movedLog) == moves && moving {
		t.Errorf("%s: no view of the state restored by ROLLBACK TO CHECKPOINT %d moved to a newer format", name, record.LastDDL.ID)
	}
	for n, want := range kept {
		if got := rows(t, conn, "SELECT * FROM "+n); !slices.Equal(got, want) {
			t.Errorf("%s of %s after ROLLBACK TO CHECKPOINT %d and replay:\n got %v\nwant %v", n, name, record.LastDDL.ID, got, want)
		}
	}
	if got := testutil.ViewDefinition(t, conn, "per_k"); got != restored {
		t.Errorf("per_k of %s after ROLLBACK TO CHECKPOINT %d: %q, want %q", name, record.LastDDL.ID, got, restored)
	}
	_, err = conn.Exec(context.Background(), "SELECT * FROM per_k_fresh")
	testutil.WantCode(t, err, "42P01", "")
	if gen.Savepoint == "" {
		return
	}

	// The generation's savepoint: read as it was, then rolled back to.
	for n, want := range gen.Rows {
		if got := rows(t, conn, fmt.Sprintf("SELECT * FROM %s AS OF SAVEPOINT %s", n, gen.Savepoint)); !slices.Equal(got, want) {
			t.Errorf("%s AS OF SAVEPOINT %s of %s:\n got %v\nwant %v", n, gen.Savepoint, name, got, want)
		}
	}
	moves = strings.Count(srv.Logs(), movedLog)
	exec(t, conn, "ROLLBACK TO SAVEPOINT "+gen.Savepoint, "FLUSH")
	if strings.Count(srv.Logs(), movedLog) == moves && moving {
		t.Errorf("%s: no view of the state restored by ROLLBACK TO SAVEPOINT %s moved to a newer format", name, gen.Savepoint)
	}
	for n, want := range kept {
		if got := rows(t, conn, "SELECT * FROM "+n); !slices.Equal(got, want) {
			t.Errorf("%s of %s after ROLLBACK TO SAVEPOINT %s and replay:\n got %v\nwant %v", n, name, gen.Savepoint, got, want)
		}
	}
	for _, n := range gen.Altered {
		if got := testutil.ViewDefinition(t, conn, n); got != views[n] {
			t.Errorf("%s of %s after ROLLBACK TO SAVEPOINT %s: %q, want the query before the generation's ALTER, %q", n, name, gen.Savepoint, got, views[n])
		}
	}
}
