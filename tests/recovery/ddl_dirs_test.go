package recovery

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestDDLSurvivesCheckpointDirChange: recovery never restores a checkpoint
// older than an acknowledged DDL, whichever directories the checkpoints
// went to. The reproduction of issue 14 item 7: a table created while
// state.checkpoints.dir pointed elsewhere, the setting reset, kill -9.
func TestDDLSurvivesCheckpointDirChange(t *testing.T) {
	t.Parallel()
	natsURL := testutil.StartNATS(t)
	other := filepath.Join(t.TempDir(), "x")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL,
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=0")})
	conn := srv.Conn(t)
	// Checkpoints in the default directory that know only table a.
	testutil.MustExec(t, conn, "CREATE TABLE a (id BIGINT PRIMARY KEY, v VARCHAR)",
		"INSERT INTO a VALUES (1, 'one')", "CHECKPOINT")
	setAutoFile(t, srv.DataDir, "state.checkpoints.dir", other)
	srv.Restart(t)
	conn = srv.Conn(t)
	if got := setting(t, conn, "state.checkpoints.dir"); got != other {
		t.Fatalf("state.checkpoints.dir after restart is %q, want %q", got, other)
	}
	testutil.MustExec(t, conn, "CREATE TABLE b (id BIGINT PRIMARY KEY, v VARCHAR)",
		"INSERT INTO b VALUES (1, 'x'), (2, 'y')",
		"INSERT INTO a VALUES (2, 'two')",
		"ALTER SYSTEM RESET state.checkpoints.dir")
	if dirs := chkDirs(t, other, true); len(dirs) == 0 {
		t.Fatalf("CREATE TABLE b left no checkpoint in %s", other)
	}
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	rec := logLines(runLog(srv), "recovering from checkpoint")
	if len(rec) != 1 || !strings.HasPrefix(logField(rec[0], "dir"), other) {
		t.Errorf("want recovery from the checkpoint in %s written by CREATE TABLE b, log says %q", other, rec)
	}
	testutil.MustExec(t, conn, "FLUSH") // the tables replay their changelogs
	wantRow(t, conn, "SELECT count(*), min(v), max(v) FROM b", "2 x y")
	wantRow(t, conn, "SELECT count(*) FROM a", "2")

	// Back in the default directory: new checkpoints continue the ids, so
	// a later DDL there is again the newest and survives another crash.
	testutil.MustExec(t, conn, "CREATE TABLE c (id BIGINT PRIMARY KEY)", "INSERT INTO c VALUES (7)")
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT count(*) FROM b", "2")
	wantRow(t, conn, "SELECT id FROM c", "7")
	rec = logLines(runLog(srv), "recovering from checkpoint")
	if len(rec) != 1 || !strings.HasPrefix(logField(rec[0], "dir"), srv.DataDir) {
		t.Errorf("want recovery from the default directory under %s, log says %q", srv.DataDir, rec)
	}
}

// setAutoFile adds key: value to <data dir>/streamdb.auto.yaml, as an
// operator would: SQL may not set directories (issue 16), and the file is
// read at the next start.
func setAutoFile(t testing.TB, dataDir, key, value string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dataDir, "streamdb.auto.yaml"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "%s: %q\n", key, value); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryRefusesToLoseDDL: when the checkpoint that recorded the last
// DDL is gone and only older ones remain, the server does not start from
// an older point; it says what is missing and how to go on.
func TestRecoveryRefusesToLoseDDL(t *testing.T) {
	t.Parallel()
	natsURL := testutil.StartNATS(t)
	other := filepath.Join(t.TempDir(), "x")
	cfg := writeConfig(t, "execution.checkpointing.interval=0")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "CREATE TABLE a (id BIGINT PRIMARY KEY)", "CHECKPOINT")
	setAutoFile(t, srv.DataDir, "state.checkpoints.dir", other)
	srv.Restart(t)
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "CREATE TABLE b (id BIGINT PRIMARY KEY)", "ALTER SYSTEM RESET state.checkpoints.dir")
	srv.Kill(t)
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}

	// testutil's Restart fails the test when the server does not come up;
	// run the same command line by hand.
	args := []string{"--listen", fmt.Sprintf("127.0.0.1:%d", testutil.FreePort(t)), "--http-listen", "", "--data-dir", srv.DataDir,
		"--nats-url", natsURL, "--config", cfg}
	cmd := exec.Command(testutil.BuildServer(t), args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("server exited cleanly; want a refusal to start. Output:\n%s", out.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("server started (or hung) although the checkpoint of CREATE TABLE b is gone. Output:\n%s", out.String())
	}
	msg := out.String()
	for _, want := range []string{"cannot recover without losing a committed schema change", other, "--restore-from"} {
		if !strings.Contains(msg, want) {
			t.Errorf("startup error does not mention %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "recovering from checkpoint") {
		t.Errorf("server began restoring an older checkpoint:\n%s", msg)
	}
}

// TestForeignCheckpointDirsSurvive: pointing state.checkpoints.dir at a
// directory that already holds chk-* directories (of another server, or
// anything else) neither deletes nor restores them: retention, startup
// cleanup after kill -9 and recovery touch only the server's own.
func TestForeignCheckpointDirsSurvive(t *testing.T) {
	t.Parallel()
	natsURL := testutil.StartNATS(t)
	foreign := filepath.Join(t.TempDir(), "shared")
	// An incomplete-looking one, a completed-looking one with a larger id
	// than this server will reach soon, and plain files.
	files := map[string]string{
		"chk-0000000001/notes.txt":        "not streamdb's",
		"chk-0000000002/state/000001.sst": "foreign sstable",
		"chk-0000000002/_metadata.json":   `{"format_version":1,"kind":"checkpoint","id":2,"status":"completed","backend":"pebble","files":[]}`,
		"chk-0000000500/_metadata.json":   `{"format_version":1,"kind":"checkpoint","id":500,"epoch":1,"status":"completed","backend":"pebble","files":[]}`,
		"chk-0000000500/readme":           "keep me",
	}
	for name, content := range files {
		path := filepath.Join(foreign, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkForeign := func(when string) {
		t.Helper()
		for name, content := range files {
			got, err := os.ReadFile(filepath.Join(foreign, name))
			if err != nil || string(got) != content {
				t.Errorf("%s: foreign file %s: %q, %v (want it untouched)", when, name, got, err)
			}
		}
	}

	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: writeConfig(t,
		"execution.checkpointing.interval=100ms", "state.checkpoints.num-retained=1",
		"state.checkpoints.dir="+foreign)})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)", "INSERT INTO t VALUES (1, 10), (2, 20)")
	start := maxID(checkpoints(t, conn))
	testutil.Poll(t, 30*time.Second, "5 more checkpoints", func() error {
		if id := maxID(checkpoints(t, conn)); id < start+5 {
			return fmt.Errorf("newest id %d", id)
		}
		return nil
	})
	checkForeign("after retention")
	for _, c := range checkpoints(t, conn) {
		if c.Status == "completed" && (c.ID == 2 || c.ID == 500) {
			t.Errorf("SHOW CHECKPOINTS lists the foreign checkpoint %d as the server's", c.ID)
		}
	}
	own := func() []string {
		var out []string
		for _, d := range chkDirs(t, foreign, true) {
			if _, foreignName := files[d+"/_metadata.json"]; !foreignName {
				out = append(out, d)
			}
		}
		return out
	}
	testutil.Poll(t, 30*time.Second, "retention keeps one own checkpoint", func() error {
		if o := own(); len(o) != 1 {
			return fmt.Errorf("own completed checkpoints %v", o)
		}
		return nil
	})

	srv.Restart(t)
	checkForeign("after a clean restart")
	srv.Kill(t)
	srv.Restart(t)
	checkForeign("after kill -9 and restart")
	rec := logLines(runLog(srv), "recovering from checkpoint")
	if len(rec) != 1 || strings.Contains(rec[0], "chk-0000000500") || strings.Contains(rec[0], "chk-0000000002") {
		t.Errorf("recovery must use the server's own newest checkpoint, log says %q", rec)
	}
	conn = srv.Conn(t)
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT count(*), sum(v) FROM t", "2 30")
	quiesce(t, srv)
	checkForeign("at the end")
}
