package recovery

import (
	"fmt"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestShutdownDuringCheckpoint stops the server cleanly (SIGTERM) while
// checkpoints of a few MB of state are in flight, several times: each
// shutdown must exit with status 0 (testutil fails the test otherwise) and
// the next start must have the views intact.
func TestShutdownDuringCheckpoint(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{ConfigFile: writeConfig(t,
		"execution.checkpointing.interval=1ms", "execution.checkpointing.max-concurrent-checkpoints=4")})
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	buildState(t, conn, js, 40000)
	for i := 0; i < 8; i++ {
		testutil.Poll(t, 30*time.Second, "a checkpoint in progress", func() error {
			for _, c := range checkpoints(t, conn) {
				if c.Status == "in progress" {
					return nil
				}
			}
			return fmt.Errorf("none")
		})
		srv.Stop(t)
		if t.Failed() {
			t.Fatalf("shutdown %d was not clean", i+1)
		}
		srv.Restart(t)
		conn = srv.Conn(t)
		wantRow(t, conn, "SELECT count(*) FROM big_rows", "40000")
	}
}
