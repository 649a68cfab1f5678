package recovery

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/pgcdc"
	"streamdb/tests/testutil"
)

// waitSourceCaughtUp waits until streamdb's one PostgreSQL source has
// applied every transaction the source database src had committed when
// it was called, and is running. The target is the WAL insert position:
// the test databases run with synchronous_commit off, so a commit
// returns before its WAL is written, and the write position
// (pg_current_wal_lsn) can be behind transactions already committed.
func waitSourceCaughtUp(t *testing.T, src, conn *pgx.Conn, what string) {
	t.Helper()
	target := testutil.Scalar(t, src, "SELECT pg_current_wal_insert_lsn()::text")
	want, err := pgcdc.ParseLSN(target)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 10*time.Minute, what, func() error {
		_, rows, err := queryText(conn, time.Minute, "SELECT applied_lsn, status FROM streamdb_sources")
		if err != nil {
			return err
		}
		if got, err := pgcdc.ParseLSN(rows[0][0]); err != nil || got < want || rows[0][1] != "running" {
			return fmt.Errorf("at %s (%s), not yet at %s", rows[0][0], rows[0][1], target)
		}
		return nil
	})
}
