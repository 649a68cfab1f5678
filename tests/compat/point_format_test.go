package compat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"streamdb/checkpoint"
	"streamdb/tests/testutil"
)

// TestRefuseUnreadablePoint: --restore-from a savepoint whose metadata
// format is newer, or older, than this binary reads stops the server with
// a message that says so and which release to use; the data directory
// still starts afterwards, its views as they were.
func TestRefuseUnreadablePoint(t *testing.T) {
	bin := testutil.BuildServer(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{Binary: bin})
	conn := srv.Conn(t)
	exec(t, conn, schema[0], "CREATE MATERIALIZED VIEW per_k AS "+views["per_k"])
	publish(t, srv, 0, 100)
	exec(t, conn, "FLUSH", "SAVEPOINT sp")
	want := rows(t, conn, "SELECT * FROM per_k")
	srv.Stop(t)

	point := filepath.Join(t.TempDir(), "sp")
	if err := os.CopyFS(point, os.DirFS(filepath.Join(srv.DataDir, "savepoints", "sp"))); err != nil {
		t.Fatal(err)
	}
	metaPath := filepath.Join(point, checkpoint.MetadataFile)
	raw, err := os.ReadFile(metaPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version int
		want    string
	}{
		{checkpoint.FormatVersion + 1, "is newer than this streamdb reads"},
		{checkpoint.FormatVersion - 1, "is older than this streamdb reads"},
	} {
		var meta map[string]any
		if err := json.Unmarshal(raw, &meta); err != nil {
			t.Fatal(err)
		}
		meta["format_version"] = c.version
		data, err := json.Marshal(meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(metaPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := startRefused(t, bin, srv.DataDir, "--restore-from", point)
		if !strings.Contains(out, "--restore-from") || !strings.Contains(out, c.want) || !strings.Contains(out, "restore it with") {
			t.Errorf("--restore-from a point of format %d: the output does not say why or what to do:\n%s", c.version, out)
		}
	}
	srv.Restart(t)
	if got := rows(t, srv.Conn(t), "SELECT * FROM per_k"); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("per_k after the refused restores:\n got %v\nwant %v", got, want)
	}
}
