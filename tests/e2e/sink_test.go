package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// waitSink polls until a consumer that applies every message on subject
// holds exactly the rows of view (SELECT * FROM view), with no
// Nats-Msg-Id twice, and returns what it read.
func waitSink(t *testing.T, conn *pgx.Conn, js jetstream.JetStream, subject, envelope, view string, cols []string) *testutil.SinkFeed {
	t.Helper()
	var feed *testutil.SinkFeed
	testutil.Poll(t, 30*time.Second, "sink "+subject+" equals "+view, func() error {
		want := testutil.SortedRows(t, conn, "SELECT * FROM "+view)
		f, err := testutil.ReadSink(js, subject, envelope, cols)
		if err != nil {
			return err
		}
		if id := f.DuplicateID(); id != "" {
			t.Fatalf("sink %s published Nats-Msg-Id %s twice", subject, id)
		}
		if got := f.Sorted(); !slices.Equal(got, want) {
			return fmt.Errorf("consumer has %v, view has %v", got, want)
		}
		feed = f
		return nil
	})
	return feed
}

// TestSinkEnvelopes: CREATE SINK publishes a view's rows, then its
// changes, in each envelope's shape; SHOW SINKS lists the sinks and their
// lag; bad sinks are refused with their SQLSTATE; DROP SINK stops one, and
// a view with sinks is dropped only with CASCADE.
func TestSinkEnvelopes(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "ALTER SYSTEM SET execution.checkpointing.interval = '100ms'",
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"INSERT INTO t VALUES (1, 10), (2, 20)",
		"CREATE MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total FROM t GROUP BY k",
		"CREATE STREAM src (x int) WITH (subject = 'in.src')",
		"CREATE MATERIALIZED VIEW multi AS SELECT v % 2 AS parity FROM t",
		"CREATE SINK s_cl FROM agg INTO 'out.cl'",
		"CREATE SINK s_up FROM agg INTO 'out.up' WITH (envelope = 'upsert')",
		"CREATE SINK s_dz FROM agg INTO 'out.dz' WITH (format = 'json', envelope = 'debezium')",
		"CREATE SINK IF NOT EXISTS s_cl FROM agg INTO 'out.other'")
	cols := []string{"k", "total"}
	flush(t, conn)
	cl := waitSink(t, conn, js, "out.cl", "changelog", "agg", cols)
	if want := `[{"op":"+","row":{"k":1,"total":10}},{"op":"+","row":{"k":2,"total":20}}]`; len(cl.Msgs) != 1 || cl.Msgs[0] != want {
		t.Fatalf("changelog snapshot: got %q, want [%s]", cl.Msgs, want)
	}
	if !strings.HasSuffix(cl.IDs[0], "/1/0") || cl.Epochs[0] == "" {
		t.Fatalf("snapshot message: Nats-Msg-Id %q, Streamdb-Epoch %q", cl.IDs[0], cl.Epochs[0])
	}
	waitSink(t, conn, js, "out.up", "upsert", "agg", cols)
	waitSink(t, conn, js, "out.dz", "debezium", "agg", cols)

	// One epoch each (FLUSH waits until the view has the change).
	exec(t, conn, "UPDATE t SET v = 11 WHERE k = 1", "FLUSH",
		"DELETE FROM t WHERE k = 2", "FLUSH",
		"INSERT INTO t VALUES (3, 30)", "FLUSH")
	cl = waitSink(t, conn, js, "out.cl", "changelog", "agg", cols)
	up := waitSink(t, conn, js, "out.up", "upsert", "agg", cols)
	dz := waitSink(t, conn, js, "out.dz", "debezium", "agg", cols)
	for _, want := range []string{
		`[{"op":"-","row":{"k":1,"total":10}},{"op":"+","row":{"k":1,"total":11}}]`,
		`[{"op":"-","row":{"k":2,"total":20}}]`,
		`[{"op":"+","row":{"k":3,"total":30}}]`,
	} {
		if !slices.Contains(cl.Msgs, want) {
			t.Errorf("changelog: no message %s in %q", want, cl.Msgs)
		}
	}
	for _, want := range []string{
		`{"key":{"k":1},"value":{"k":1,"total":10}}`,
		`{"key":{"k":1},"value":{"k":1,"total":11}}`,
		`{"key":{"k":2},"value":null}`,
		`{"key":{"k":3},"value":{"k":3,"total":30}}`,
	} {
		if !slices.Contains(up.Msgs, want) {
			t.Errorf("upsert: no message %s in %q", want, up.Msgs)
		}
	}
	for _, want := range []string{
		`{"before":null,"after":{"k":2,"total":20},"op":"c"}`,
		`{"before":{"k":1,"total":10},"after":{"k":1,"total":11},"op":"u"}`,
		`{"before":{"k":2,"total":20},"after":null,"op":"d"}`,
	} {
		if !slices.Contains(dz.Msgs, want) {
			t.Errorf("debezium: no message %s in %q", want, dz.Msgs)
		}
	}

	var show []string
	poll(t, 30*time.Second, func() error {
		show = textRows(t, conn, "SHOW SINKS")
		for _, r := range show {
			f := strings.Fields(r)
			if len(f) < 10 || f[7] != "0" {
				return fmt.Errorf("SHOW SINKS: %q: pending epochs left", show)
			}
		}
		return nil
	})
	if len(show) != 3 || !strings.HasPrefix(show[0], "s_cl agg out.cl ") || !strings.Contains(show[1], " json debezium ") {
		t.Fatalf("SHOW SINKS: %q", show)
	}

	fams := srv.Metrics(t)
	if n := metricValue(t, fams, "streamdb_sink_messages_total", "sink", "s_dz"); n != float64(len(dz.Msgs)) {
		t.Errorf("streamdb_sink_messages_total{sink=\"s_dz\"} = %v, the subject holds %d messages", n, len(dz.Msgs))
	}
	if n := metricValue(t, fams, "streamdb_sink_pending_epochs", "sink", "s_cl"); n != 0 {
		t.Errorf("streamdb_sink_pending_epochs{sink=\"s_cl\"} = %v once SHOW SINKS shows none pending", n)
	}

	bad := []struct{ sql, code string }{
		{"CREATE SINK s_cl FROM agg INTO 'out.x'", "42710"},
		{"CREATE SINK x FROM agg INTO 'out.cl'", "42710"},
		{"CREATE SINK x FROM agg INTO 'in.src'", "42710"},
		{"CREATE SINK x FROM agg INTO 'streamdb.x'", "42602"},
		{"CREATE SINK x FROM agg INTO 'out.*'", "22023"},
		{"CREATE SINK x FROM src INTO 'out.x'", "42809"},
		{"CREATE SINK x FROM nope INTO 'out.x'", "42P01"},
		{"CREATE SINK x FROM agg INTO 'out.x' WITH (envelope = 'avro')", "22023"},
		{"CREATE SINK x FROM agg INTO 'out.x' WITH (partitions = 3)", "22023"},
		{"CREATE SINK x FROM multi INTO 'out.x' WITH (envelope = 'upsert')", "0A000"},
		{"DROP SINK nope", "42704"},
		{"DROP MATERIALIZED VIEW agg", "2BP01"},
		{"ALTER MATERIALIZED VIEW agg AS SELECT k, sum(v) AS total, count(*) AS n FROM t GROUP BY k", "2BP01"},
	}
	for _, b := range bad {
		_, err := conn.Exec(testutil.Context(t, 30*time.Second), b.sql, pgx.QueryExecModeSimpleProtocol)
		testutil.WantCode(t, err, b.code, b.sql)
	}

	exec(t, conn, "DROP SINK s_up", "DROP SINK IF EXISTS s_up")
	upMsgs := len(up.Msgs)
	exec(t, conn, "INSERT INTO t VALUES (4, 40)")
	flush(t, conn)
	waitSink(t, conn, js, "out.cl", "changelog", "agg", cols)
	if f, err := testutil.ReadSink(js, "out.up", "upsert", cols); err != nil || len(f.Msgs) != upMsgs {
		t.Fatalf("a dropped sink published: %d messages before DROP SINK, %v after (%v)", upMsgs, f, err)
	}
	if got := textRows(t, conn, "SHOW SINKS"); len(got) != 2 {
		t.Fatalf("SHOW SINKS after DROP SINK s_up: %q", got)
	}
	exec(t, conn, "DROP MATERIALIZED VIEW agg CASCADE")
	if got := textRows(t, conn, "SHOW SINKS"); len(got) != 0 {
		t.Fatalf("SHOW SINKS after DROP ... CASCADE: %q", got)
	}
}
