package recovery

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestSinkNATSDown: a sink whose subject's NATS server is down keeps its
// changes in the outbox (SHOW SINKS: pending epochs, status retrying) and,
// once NATS is back on the same address and store, publishes them: a
// consumer applying every message equals the view, no Nats-Msg-Id twice.
func TestSinkNATSDown(t *testing.T) {
	ns := testutil.StartNATSServer(t)
	storeDir := ns.JetStreamConfig().StoreDir
	addr := ns.Addr().String()
	// No periodic checkpoints: the sink publishes at each CHECKPOINT.
	cfg := writeConfig(t, "execution.checkpointing.interval=0")
	srv := startServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL(), ConfigFile: cfg})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE t (k bigint PRIMARY KEY, v bigint)",
		"CREATE MATERIALIZED VIEW agg AS SELECT k % 3 AS b, count(*) AS n, sum(v) AS total FROM t GROUP BY k % 3",
		"CREATE SINK out FROM agg INTO 'down.out' WITH (envelope = 'upsert')")
	for i := range 30 {
		testutil.MustExec(t, conn, fmt.Sprintf("INSERT INTO t VALUES (%d, %d)", i, i*i))
	}
	testutil.MustExec(t, conn, "FLUSH")

	ns.Shutdown()
	ns.WaitForShutdown()
	testutil.MustExec(t, conn, "CHECKPOINT")
	testutil.Poll(t, time.Minute, "SHOW SINKS reports the sink retrying with changes pending", func() error {
		rows := queryMaps(t, conn, "SHOW SINKS")
		if len(rows) != 1 || rows[0]["pending_epochs"] == "0" || !strings.HasPrefix(rows[0]["status"], "retrying: ") {
			return fmt.Errorf("SHOW SINKS: %v", rows)
		}
		return nil
	})

	back := testutil.RestartNATS(t, addr, storeDir, srv)
	_, js := testutil.JetStream(t, back.ClientURL())
	want := testutil.SortedRows(t, conn, "SELECT * FROM agg")
	testutil.Poll(t, time.Minute, "the consumer equals the view", func() error {
		f, err := testutil.ReadSink(js, "down.out", "upsert", []string{"b", "n", "total"})
		if err != nil {
			return err
		}
		if id := f.DuplicateID(); id != "" {
			t.Fatalf("Nats-Msg-Id %s published twice", id)
		}
		if got := f.Sorted(); !slices.Equal(got, want) {
			return fmt.Errorf("consumer %v, view %v", got, want)
		}
		return nil
	})
	testutil.Poll(t, time.Minute, "SHOW SINKS reports it publishing", func() error {
		rows := queryMaps(t, conn, "SHOW SINKS")
		if len(rows) != 1 || rows[0]["pending_epochs"] != "0" || rows[0]["status"] != "publishing" {
			return fmt.Errorf("SHOW SINKS: %v", rows)
		}
		return nil
	})
}
