package recovery

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// TestRestoredTableHistoryGone restores (--restore-from) a checkpoint whose
// recorded position in a table's changelog JetStream no longer holds (the
// changelog was purged after it was taken). The table must fail as the
// views over it do: SELECT, INSERT, UPDATE and DELETE get 55000 naming the
// table and the missing messages, with a hint on how to recover, instead
// of the checkpoint's rows or a write acknowledged and never seen, also
// after another restart. A table whose changelog is whole goes on.
func TestRestoredTableHistoryGone(t *testing.T) {
	natsURL := testutil.StartNATS(t)
	cfg := writeConfig(t, "execution.checkpointing.interval=0")
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE k (id BIGINT PRIMARY KEY, v BIGINT)",
		"CREATE TABLE fine (id BIGINT PRIMARY KEY, v BIGINT)",
		"CREATE MATERIALIZED VIEW k_sum AS SELECT count(*) AS n, sum(v) AS s FROM k",
		"INSERT INTO k VALUES (1, 1), (2, 2)",
		"INSERT INTO fine VALUES (1, 1)",
		"FLUSH")
	old := takeCheckpoint(t, conn)
	for i := 3; i <= 6; i++ {
		testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO k VALUES (%d, %d)", i, i))
	}
	testutil.MustExec(t, conn, "FLUSH")
	takeCheckpoint(t, conn)
	srv.Stop(t)

	// The changelog loses the messages after the old checkpoint's position.
	_, js := testutil.JetStream(t, natsURL)
	ctx := testutil.Context(t, time.Minute)
	name, err := js.StreamNameBySubject(ctx, "streamdb.table.k")
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(ctx); err != nil {
		t.Fatal(err)
	}

	from := filepath.Join(t.TempDir(), filepath.Base(old.Dir))
	testutil.CopyDir(t, old.Dir, from)
	srv = startServer(t, testutil.ServerOptions{NATSURL: natsURL, DataDir: srv.DataDir, ConfigFile: cfg,
		Args: []string{"--restore-from", from}})
	conn = srv.Conn(t)
	testutil.Poll(t, 30*time.Second, "table k fails", func() error {
		err := testutil.ExecSimple(conn, time.Minute, "SELECT * FROM k")
		if err == nil {
			return errors.New("SELECT from k succeeded")
		}
		return nil
	})
	refused := func(when string) {
		t.Helper()
		for _, sql := range []string{"SELECT * FROM k", "SELECT count(*) FROM k WHERE id = 1", "INSERT INTO k VALUES (150, 7)",
			"UPDATE k SET v = 7 WHERE id = 1", "DELETE FROM k WHERE id = 2", "INSERT INTO fine SELECT id + 100, v FROM k",
			"COPY k TO STDOUT", "SELECT n, s FROM k_sum"} {
			err := testutil.ExecSimple(conn, time.Minute, sql)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) {
				t.Errorf("%s: %s: want 55000, got %v", when, sql, err)
				continue
			}
			if pe.Code != "55000" || goTypeName.MatchString(pe.Message) || pe.Hint == "" {
				t.Errorf("%s: %s: got %s %q (hint %q), want 55000 with a hint", when, sql, pe.Code, pe.Message, pe.Hint)
			}
			if !strings.HasPrefix(sql, "SELECT n") && !strings.Contains(pe.Message, `"k"`) {
				t.Errorf("%s: %s: message %q does not name table k", when, sql, pe.Message)
			}
		}
		// A transaction block fails as the statements do.
		err := execAll(conn, "BEGIN", "INSERT INTO k VALUES (151, 7)", "COMMIT")
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "55000" {
			t.Errorf("%s: a block writing k: got %v, want 55000", when, err)
		}
		if conn.PgConn().TxStatus() != 'I' {
			testutil.MustExec(t, conn, "ROLLBACK")
		}
		// The other table goes on.
		testutil.MustExec(t, conn, "INSERT INTO fine VALUES (2, 2)")
		wantRow(t, conn, "SELECT count(*), sum(v) FROM fine", "2 3")
		testutil.MustExec(t, conn, "DELETE FROM fine WHERE id = 2")
	}
	refused("after --restore-from")
	t.Logf("SELECT from k: %v", testutil.ExecSimple(conn, time.Minute, "SELECT * FROM k"))

	// A plain restart of the same data directory (no --restore-from).
	srv.Stop(t)
	srv = startServer(t, testutil.ServerOptions{NATSURL: natsURL, DataDir: srv.DataDir, ConfigFile: cfg})
	conn = srv.Conn(t)
	refused("after another restart")
	// Nothing refused was written.
	last, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last.State.Msgs != 0 {
		t.Errorf("table k's changelog holds %d messages after the refused writes, want 0", last.State.Msgs)
	}

	// The hint's way out: drop the table and create it again.
	testutil.MustExec(t, conn, "DROP MATERIALIZED VIEW k_sum", "DROP TABLE k",
		"CREATE TABLE k (id BIGINT PRIMARY KEY, v BIGINT)", "INSERT INTO k VALUES (150, 7)")
	wantRow(t, conn, "SELECT id, v FROM k", "150 7")
}
