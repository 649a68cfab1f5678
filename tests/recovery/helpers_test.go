package recovery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// seedFor returns the seed of a test's random choices ($RECOVERY_SEED
// replays one), logged as testutil.Seed does.
func seedFor(t *testing.T) uint64 { return testutil.Seed(t, "RECOVERY_SEED") }

// nullText stands for SQL NULL in text rows.
const nullText = "\x00NULL"

// queryText runs sql with the simple protocol and returns the column names
// and every value in the server's text format (nullText for NULL).
func queryText(conn *pgx.Conn, timeout time.Duration, sql string) ([]string, [][]string, error) {
	return testutil.QueryText(conn, timeout, sql, nullText)
}

// mustQuery is queryText failing the test on error.
func mustQuery(t testing.TB, conn *pgx.Conn, sql string) ([]string, [][]string) {
	t.Helper()
	cols, rows, err := queryText(conn, time.Minute, sql)
	if err != nil {
		t.Fatalf("%s: %v", testutil.OneLine(sql), err)
	}
	return cols, rows
}

// queryMaps returns each row as column name -> text value.
func queryMaps(t testing.TB, conn *pgx.Conn, sql string) []map[string]string {
	t.Helper()
	cols, rows := mustQuery(t, conn, sql)
	out := make([]map[string]string, len(rows))
	for i, r := range rows {
		m := map[string]string{}
		for j, c := range cols {
			m[c] = r[j]
		}
		out[i] = m
	}
	return out
}

func atoi(t testing.TB, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}

// writeConfig writes a YAML config file of flat "key: value" settings.
func writeConfig(t testing.TB, settings ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "streamdb.yaml")
	var b strings.Builder
	for _, s := range settings {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			t.Fatalf("writeConfig: %q is not key=value", s)
		}
		fmt.Fprintf(&b, "%s: %q\n", strings.TrimSpace(k), strings.TrimSpace(v))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runLog returns the log of the server's current (newest) run.
func runLog(srv *testutil.Server) string {
	logs := srv.Logs()
	if i := strings.LastIndex(logs, "=== testutil:"); i >= 0 {
		return logs[i:]
	}
	return logs
}

// logLines returns the lines of log that contain msg.
func logLines(log, msg string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, msg) {
			out = append(out, l)
		}
	}
	return out
}

// logField extracts key=value (value unquoted) from a slog text line.
func logField(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		if s, err := strconv.QuotedPrefix(v); err == nil {
			u, _ := strconv.Unquote(s)
			return u
		}
	}
	if j := strings.IndexByte(v, ' '); j >= 0 {
		v = v[:j]
	}
	return v
}

// ckpt is one row of SHOW CHECKPOINTS.
type ckpt struct {
	ID                  int64
	Status, Trigger     string
	Epoch               int64
	Started, Completed  time.Time // Completed is zero while in progress
	DurationMS, PauseMS float64
	SizeBytes, NewBytes int64
	Positions, Dir, Err string
}

func (c ckpt) String() string {
	return fmt.Sprintf("#%d %s %s epoch=%d size=%d new=%d %s %s", c.ID, c.Status, c.Trigger, c.Epoch, c.SizeBytes, c.NewBytes, filepath.Base(c.Dir), c.Err)
}

const pgTimestamp = "2006-01-02 15:04:05.999999-07"

// checkpoints returns SHOW CHECKPOINTS, oldest first.
func checkpoints(t testing.TB, conn *pgx.Conn) []ckpt {
	t.Helper()
	var out []ckpt
	for _, m := range queryMaps(t, conn, "SHOW CHECKPOINTS") {
		c := ckpt{Status: m["status"], Trigger: m["trigger"], Positions: m["positions"], Dir: m["directory"]}
		c.ID = atoi(t, m["id"])
		c.Epoch = atoi(t, m["epoch"])
		c.SizeBytes = atoi(t, m["size_bytes"])
		c.NewBytes = atoi(t, m["new_bytes"])
		c.DurationMS, _ = strconv.ParseFloat(m["duration_ms"], 64)
		c.PauseMS, _ = strconv.ParseFloat(m["pause_ms"], 64)
		var err error
		if c.Started, err = time.Parse(pgTimestamp, m["started_at"]); err != nil {
			t.Fatalf("started_at %q: %v", m["started_at"], err)
		}
		if m["completed_at"] != nullText {
			if c.Completed, err = time.Parse(pgTimestamp, m["completed_at"]); err != nil {
				t.Fatalf("completed_at %q: %v", m["completed_at"], err)
			}
		}
		if m["error"] != nullText {
			c.Err = m["error"]
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// checkpointByID finds one checkpoint in SHOW CHECKPOINTS.
func checkpointByID(t testing.TB, conn *pgx.Conn, id int64) (ckpt, bool) {
	t.Helper()
	for _, c := range checkpoints(t, conn) {
		if c.ID == id {
			return c, true
		}
	}
	return ckpt{}, false
}

// takeCheckpoint runs CHECKPOINT and returns the new checkpoint's row.
func takeCheckpoint(t testing.TB, conn *pgx.Conn) ckpt {
	t.Helper()
	before := maxID(checkpoints(t, conn))
	testutil.MustExec(t, conn, "CHECKPOINT")
	for _, c := range checkpoints(t, conn) {
		if c.ID > before && c.Trigger == "manual" && c.Status == "completed" {
			return c
		}
	}
	t.Fatalf("CHECKPOINT succeeded but SHOW CHECKPOINTS has no new completed manual checkpoint: %v", checkpoints(t, conn))
	return ckpt{}
}

func maxID(cs []ckpt) int64 {
	var m int64
	for _, c := range cs {
		m = max(m, c.ID)
	}
	return m
}

// chkDirs lists the chk-* directories under dir; completedOnly keeps those
// holding a _metadata.json.
func chkDirs(t testing.TB, dir string, completedOnly bool) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "chk-") {
			continue
		}
		if completedOnly {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "_metadata.json")); err != nil {
				continue
			}
		}
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// viewStatus returns the status column of SHOW MATERIALIZED VIEWS for view.
func viewStatus(t testing.TB, conn *pgx.Conn, view string) string {
	t.Helper()
	for _, m := range queryMaps(t, conn, "SHOW MATERIALIZED VIEWS") {
		if m["name"] == view {
			return m["status"]
		}
	}
	t.Fatalf("SHOW MATERIALIZED VIEWS has no view %q", view)
	return ""
}

// setting returns SHOW key.
func setting(t testing.TB, conn *pgx.Conn, key string) string {
	t.Helper()
	return testutil.Scalar(t, conn, "SHOW "+key)
}

// startServer is testutil.StartServer that quiesces checkpoints before
// the server is stopped. ($STREAMDB_TEST_LOG_DIR keeps the server's log.)
func startServer(t *testing.T, opts testutil.ServerOptions) *testutil.Server {
	t.Helper()
	srv := testutil.StartServer(t, opts)
	// Runs before testutil's cleanup stops the server: let checkpoints in
	// flight finish and start no more, so that the final SIGTERM does not
	// meet one (TestShutdownDuringCheckpoint covers that case).
	t.Cleanup(func() { quiesce(t, srv) })
	return srv
}

// quiesce turns periodic checkpoints off and waits until none is in
// progress. It does nothing to a server that is not running.
func quiesce(t testing.TB, srv *testutil.Server) {
	t.Helper()
	if !srv.Running() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv.DSN())
	if err != nil {
		t.Logf("quiesce: %v", err)
		return
	}
	defer conn.Close(context.Background())
	if err := testutil.ExecSimple(conn, 30*time.Second, "SET execution.checkpointing.interval = 0"); err != nil {
		t.Logf("quiesce: %v", err)
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, rows, err := queryText(conn, 10*time.Second, "SHOW CHECKPOINTS")
		if err != nil {
			t.Logf("quiesce: %v", err)
			return
		}
		busy := false
		for _, r := range rows {
			busy = busy || r[1] == "in progress"
		}
		if !busy {
			return
		}
		time.Sleep(20 * time.Millisecond) // poll interval, under the deadline above
	}
}

// wantRow checks the values of a one-row query, joined by spaces.
func wantRow(t testing.TB, conn *pgx.Conn, sql, want string) {
	t.Helper()
	_, rows := mustQuery(t, conn, sql)
	if len(rows) != 1 {
		t.Errorf("%s: %d rows, want 1 (%s)", sql, len(rows), want)
		return
	}
	if got := strings.Join(rows[0], " "); got != want {
		t.Errorf("%s = %q, want %q", sql, got, want)
	}
}

// publishRaw publishes n messages msg(0..n-1) asynchronously and waits for
// every acknowledgement.
func publishRaw(t testing.TB, js jetstream.JetStream, subject string, n int, msg func(i int) string) {
	t.Helper()
	for start := 0; start < n; start += 2000 {
		var futures []jetstream.PubAckFuture
		for i := start; i < min(n, start+2000); i++ {
			f, err := js.PublishAsync(subject, []byte(msg(i)))
			if err != nil {
				t.Fatalf("publish to %s: %v", subject, err)
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				t.Fatalf("publish to %s: %v", subject, err)
			case <-time.After(time.Minute):
				t.Fatalf("publish to %s: no ack within a minute", subject)
			}
		}
	}
}
