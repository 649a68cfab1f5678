package recovery

import (
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestPGSourceCreateFailsWhole: a CREATE SOURCE that fails after making
// its tables (here: another session takes the source's name while the
// copy runs, so the source cannot be stored) leaves nothing behind on
// either side, without a restart: its mirrored tables and progress
// table are dropped, and so is its replication slot.
func TestPGSourceCreateFailsWhole(t *testing.T) {
	src, _, conn, create, done := sourceCopyRunning(t, "take its name")
	testutil.MustExec(t, conn, "CREATE TABLE s (k int)")
	err := <-done
	if err == nil || testutil.SQLState(err) != "42P07" {
		t.Fatalf("CREATE SOURCE whose name was taken during its copy: %v (SQLSTATE %s), want 42P07", err, testutil.SQLState(err))
	}

	for _, table := range []string{"big", "s_progress"} {
		if _, _, err := queryText(conn, time.Minute, "SELECT count(*) FROM "+table); err == nil || !strings.Contains(err.Error(), "42P01") {
			t.Errorf("after CREATE SOURCE failed, its table %s: got %v, want it dropped (42P01)", table, err)
		}
	}
	_, slots := mustQuery(t, src, "SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE 'streamdb_s_%'")
	if slots[0][0] != "0" {
		t.Errorf("after CREATE SOURCE failed, %s of its replication slots remain on the source, want none", slots[0][0])
	}
	// The name is free again once the table that took it goes.
	testutil.MustExec(t, conn, "DROP TABLE s", create)
	testutil.MustExec(t, conn, "DROP SOURCE s")
}
