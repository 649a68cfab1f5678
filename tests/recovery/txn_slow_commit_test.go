package recovery

import (
	"strings"
	"time"

	"testing"

	"streamdb/tests/testutil"
)

// TestCommitOutlastsRemovalWindow: a transaction of several data messages
// to one table whose commit takes longer than the window after which an
// undecided transaction is taken for ended (shortened to 1s here, with
// the commit held 4s between its data and its reference) keeps all its
// rows, while purges after checkpoints every 100 ms look for
// transactions to remove. Before commits of several messages asked for a
// decision, the purge removed the transaction's records while it was
// still publishing, and its reference then stood for nothing: the COMMIT
// answered, and the rows were lost.
func TestCommitOutlastsRemovalWindow(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{
		ConfigFile: writeConfig(t, "execution.checkpointing.interval=100ms"),
		Env:        []string{"STREAMDB_FAULT_DURATIONS=txn-removal-window=1s,txn-after-data=4s"},
	})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE slow (id BIGINT PRIMARY KEY, pad TEXT)",
		"CREATE MATERIALIZED VIEW slow_n AS SELECT count(*) AS n FROM slow")
	// Over NATS's max_payload (1 MiB): several data messages.
	testutil.MustExec(t, conn,
		"BEGIN",
		"INSERT INTO slow SELECT g, repeat('z', 100) FROM generate_series(1, 30000) g",
		"COMMIT")
	wantRow(t, conn, "SELECT count(*) FROM slow", "30000")
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n FROM slow_n", "30000")
	srv.Restart(t)
	conn = srv.Conn(t)
	wantRow(t, conn, "SELECT count(*) FROM slow", "30000")
	wantRow(t, conn, "SELECT n FROM slow_n", "30000")
}

// TestTxnReadFailureResumes: when a table's reader fails to read a large
// transaction's data part-way (once, at the fault point txn-read-fails,
// as a NATS connection reconnecting under load made it fail), it resumes
// after what it read, and the table and its view hold the whole commit.
// Before, the reader skipped the reference as malformed after sending on
// the rows of the data messages read before the failure: part of the
// commit was visible and the rest lost.
func TestTxnReadFailureResumes(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_FAULTS=txn-read-fails"}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE rf (id BIGINT PRIMARY KEY, pad TEXT)",
		"CREATE MATERIALIZED VIEW rf_n AS SELECT count(*) AS n, sum(id) AS s FROM rf",
		"BEGIN",
		"INSERT INTO rf SELECT g, repeat('z', 100) FROM generate_series(1, 30000) g",
		"COMMIT")
	wantRow(t, conn, "SELECT count(*) FROM rf", "30000")
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n::text || ' ' || s::text FROM rf_n", "30000 450015000")
}

// TestTxnReadFailureOutlastsAttempts: when the read of a large committed
// transaction's data keeps failing part-way (100 times at the fault point
// txn-read-fails, more than any bounded number of attempts, with the
// pause between attempts shortened to 2ms), the reader keeps trying until
// the read succeeds: the table and its view hold the whole commit, and
// no skipped message is recorded. Before, the reader gave up after 40 attempts and
// skipped the reference after sending on the rows read before the
// failure: table and view held 7576 of the 30000 rows for good.
func TestTxnReadFailureOutlastsAttempts(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{Env: []string{
		"STREAMDB_FAULTS=txn-read-fails=100",
		"STREAMDB_FAULT_DURATIONS=txn-read-backoff=2ms",
	}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE rl (id BIGINT PRIMARY KEY, pad TEXT)",
		"CREATE MATERIALIZED VIEW rl_n AS SELECT count(*) AS n, sum(id) AS s FROM rl",
		"BEGIN",
		"INSERT INTO rl SELECT g, repeat('z', 100) FROM generate_series(1, 30000) g",
		"COMMIT")
	wantRow(t, conn, "SELECT count(*)::text || ' ' || sum(id)::text FROM rl", "30000 450015000")
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n::text || ' ' || s::text FROM rl_n", "30000 450015000")
	// A skip is listed under the table (its reader of the changelog).
	wantRow(t, conn, "SELECT count(*) FROM streamdb_view_errors", "0")
}

// TestTxnPartDeliveredStopsViews: when a large committed transaction's
// data turns out to be gone after part of its rows went out (the fault
// point txn-data-gone), the views reading the table stop with an error
// that says so rather than keep part of the commit.
func TestTxnPartDeliveredStopsViews(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_FAULTS=txn-data-gone"}})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE pd (id BIGINT PRIMARY KEY, pad TEXT)",
		"CREATE MATERIALIZED VIEW pd_n AS SELECT count(*) AS n FROM pd",
		"BEGIN",
		"INSERT INTO pd SELECT g, repeat('z', 100) FROM generate_series(1, 30000) g",
		"COMMIT")
	for _, rel := range []string{"pd", "pd_n"} {
		// The view stops once its reader meets the missing data.
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, rows, err := queryText(conn, 10*time.Second, "SELECT count(*) FROM "+rel)
			if err != nil {
				if !strings.Contains(err.Error(), "cannot be read whole") {
					t.Errorf("%s: %v, want an error saying the transaction cannot be read whole", rel, err)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still reads (%v) 30s after a transaction of it lost its data", rel, rows)
			}
			time.Sleep(20 * time.Millisecond) // poll interval, under the deadline above
		}
	}
}
