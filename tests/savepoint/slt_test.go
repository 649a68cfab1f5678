package savepoint

import (
	"path/filepath"
	"strings"
	"testing"

	"streamdb/tests/sqllogic"
	"streamdb/tests/testutil"
)

// TestSLTPoints runs testdata/*.slt, each against its own server started
// with periodic checkpoints off, so checkpoint ids are known in advance
// (ROLLBACK TO CHECKPOINT id, AS OF CHECKPOINT id). The other savepoint
// .slt files are under tests/sqllogic/testdata/streamdb/savepoint_*.slt and
// run by TestSLT.
func TestSLTPoints(t *testing.T) {
	files, err := filepath.Glob("testdata/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.slt: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".slt"), func(t *testing.T) {
			srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_EXECUTION_CHECKPOINTING_INTERVAL=0"}})
			sqllogic.Run(t, srv.DSN(), f)
		})
	}
}
