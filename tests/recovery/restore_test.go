package recovery

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestRestoreFrom starts servers with --restore-from: one on the original
// data directory from an older checkpoint, one on a fresh data directory
// from a copy of that checkpoint moved elsewhere. Both must recover that
// checkpoint, replay the input after it and end exact; a damaged directory
// given to --restore-from must stop the server with an error naming it.
func TestRestoreFrom(t *testing.T) {
	seed := seedFor(t)
	natsURL := testutil.StartNATS(t)
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL,
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=0")})
	conn := srv.Conn(t)
	createWorkload(t, conn)
	_, js := testutil.JetStream(t, natsURL)
	gen := newGenerator(seed)
	events := gen.generate(3000)
	publishEvents(t, js, events)
	testutil.MustExec(t, conn, "FLUSH")
	a := takeCheckpoint(t, conn)
	more := gen.generate(3000)
	publishEvents(t, js, more)
	events = append(events, more...)
	testutil.MustExec(t, conn, "FLUSH")
	takeCheckpoint(t, conn)
	srv.Stop(t)

	moved := filepath.Join(t.TempDir(), "portable", filepath.Base(a.Dir))
	testutil.CopyDir(t, a.Dir, moved)

	pg := testutil.StartPostgres(t)
	pgConn := pg.Conn(t)
	loadPostgres(t, pgConn, events)
	for _, tc := range []struct{ name, dataDir, from string }{
		{"same data dir, older checkpoint", srv.DataDir, a.Dir},
		{"fresh data dir, moved copy", t.TempDir(), moved},
	} {
		s := startServer(t, testutil.ServerOptions{NATSURL: natsURL, DataDir: tc.dataDir,
			ConfigFile: writeConfig(t, "execution.checkpointing.interval=0"), Args: []string{"--restore-from", tc.from}})
		rec := logLines(runLog(s), "recovering from checkpoint")
		if len(rec) != 1 || logField(rec[0], "dir") != tc.from {
			t.Errorf("%s: want recovery from %s, log says %q", tc.name, tc.from, rec)
		}
		c := s.Conn(t)
		testutil.MustExec(t, c, "FLUSH")
		if !compareViews(t, c, pgConn, workloadViews) {
			t.Errorf("%s: views differ after --restore-from %s", tc.name, tc.from)
		}
		s.Stop(t)
	}

	// A damaged checkpoint is refused.
	if err := os.Remove(filepath.Join(moved, "_metadata.json")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testutil.BuildServer(t), "--data-dir", t.TempDir(), "--nats-url", natsURL,
		"--listen", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), "--http-listen", "", "--restore-from", moved)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("--restore-from a directory without metadata: the server did not exit")
	}
	if err == nil || !strings.Contains(string(out), "--restore-from") || !strings.Contains(string(out), moved) {
		t.Errorf("--restore-from a damaged checkpoint: exit %v, output %q", err, out)
	}
}

// TestDDLSurvivesCrash kills the server right after CREATE and DROP
// statements return: recovery must never lose an acknowledged change of the
// catalog (each DDL takes a checkpoint before it returns).
func TestDDLSurvivesCrash(t *testing.T) {
	natsURL := testutil.StartNATS(t)
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL,
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=1h")})
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, natsURL)
	testutil.MustExec(t, conn, `CREATE STREAM ev (k BIGINT, v BIGINT) WITH (subject = 'ddl.ev', format = 'json')`)
	publishRaw(t, js, "ddl.ev", 500, func(i int) string { return fmt.Sprintf(`{"k":%d,"v":%d}`, i%10, i) })
	testutil.MustExec(t, conn, `CREATE MATERIALIZED VIEW per_k AS SELECT k, count(*) AS n, sum(v) AS s FROM ev GROUP BY k`)
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT count(*), sum(n), sum(s) FROM per_k", "10 500 124750")

	testutil.MustExec(t, conn, `CREATE MATERIALIZED VIEW big_v AS SELECT k, v FROM ev WHERE v >= 250`,
		`DROP MATERIALIZED VIEW per_k`)
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	var names []string
	for _, m := range queryMaps(t, conn, "SHOW MATERIALIZED VIEWS") {
		names = append(names, m["name"])
	}
	if strings.Join(names, ",") != "big_v" {
		t.Errorf("views after CREATE big_v, DROP per_k and kill -9: %v, want [big_v]", names)
	}
	publishRaw(t, js, "ddl.ev", 100, func(i int) string { return fmt.Sprintf(`{"k":%d,"v":%d}`, i%10, 500+i) })
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT count(*), sum(v) FROM big_v", fmt.Sprint(350, " ", sumRange(250, 599)))
}

func sumRange(from, to int) int {
	s := 0
	for i := from; i <= to; i++ {
		s += i
	}
	return s
}
