package recovery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestStreamWriteWholeOrNothing has a JetStream stream's limits refuse a
// later row of a multi-row write to one stream: the write must leave no
// row at all (in JetStream, in the stream's reads and in its views) and
// answer 53400 saying nothing was written. A write that fits lands as one
// message per row, as producers publish them, so positions count rows.
// Writes larger than one atomic batch are whole too. A stream whose
// JetStream stream does not allow atomic publish (made by others) takes
// its rows one message each, as before.
func TestStreamWriteWholeOrNothing(t *testing.T) {
	ns := testutil.StartNATSServer(t)
	srv := startServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL()})
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, ns.ClientURL())
	ctx := testutil.Context(t, 5*time.Minute)

	// A JetStream stream made outside streamdb, without allow_atomic.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ext_js", Subjects: []string{"ext.events"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	testutil.MustExec(t, conn,
		"CREATE STREAM lim (v BIGINT) WITH (subject = 'lim.events')",
		"CREATE MATERIALIZED VIEW lim_sum AS SELECT count(*) AS n, coalesce(sum(v), 0) AS s FROM lim",
		"CREATE STREAM ext (v BIGINT) WITH (subject = 'ext.events')",
		"CREATE MATERIALIZED VIEW ext_sum AS SELECT count(*) AS n, coalesce(sum(v), 0) AS s FROM ext",
		"INSERT INTO lim VALUES (1)", "INSERT INTO ext VALUES (1)", "FLUSH")

	stream := func(subject string) jetstream.Stream {
		t.Helper()
		name, err := js.StreamNameBySubject(ctx, subject)
		if err != nil {
			t.Fatal(err)
		}
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	limit := func(subject string, maxMsgs int64) {
		t.Helper()
		cfg := stream(subject).CachedInfo().Config
		cfg.MaxMsgs, cfg.Discard = maxMsgs, jetstream.DiscardNew
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	msgs := func(subject string) uint64 {
		t.Helper()
		info, err := stream(subject).Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	refused := func(sql string) {
		t.Helper()
		err := execAll(conn, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s with room for fewer rows: want an error with a SQLSTATE, got %v", sql, err)
		}
		t.Logf("%s: %s %s (%s)", sql, pe.Code, pe.Message, pe.Hint)
		if pe.Code != "53400" || !strings.Contains(pe.Hint, "Nothing was written") {
			t.Errorf("%s: %s %s (hint %q), want 53400 saying that nothing was written", sql, pe.Code, pe.Message, pe.Hint)
		}
	}
	// holds checks the rows of stream name (in JetStream and its reads)
	// and of its view.
	holds := func(name, subject string, n uint64, sum, view string) {
		t.Helper()
		if got := msgs(subject); got != n {
			t.Errorf("JetStream holds %d messages on %s, want %d", got, subject, n)
		}
		wantRow(t, conn, fmt.Sprintf("SELECT count(*), coalesce(sum(v), 0) FROM %s", name), fmt.Sprintf("%d %s", n, sum))
		testutil.MustExec(t, conn, "FLUSH")
		wantRow(t, conn, fmt.Sprintf("SELECT n, s FROM %s_sum", name), view)
	}

	// Room for two more messages: three rows are refused whole, two land,
	// one message per row.
	limit("lim.events", 3)
	refused("INSERT INTO lim VALUES (10), (11), (12)")
	holds("lim", "lim.events", 1, "1", "1 1")
	testutil.MustExec(t, conn, "INSERT INTO lim VALUES (20), (21)")
	holds("lim", "lim.events", 3, "42", "3 42")
	for seq := uint64(1); seq <= 3; seq++ {
		m, err := stream("lim.events").GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Streamdb-Txn") != "" || !strings.HasPrefix(string(m.Data), "{") {
			t.Errorf("message %d of lim.events is %q (headers %v), want one row", seq, m.Data, m.Header)
		}
	}
	// Positions count rows: moved back to the third message, the view
	// takes one row (21) again.
	testutil.MustExec(t, conn, "ALTER STREAM lim SET POSITION = 3", "FLUSH")
	wantRow(t, conn, "SELECT n, s FROM lim_sum", "4 63")

	// More rows than one atomic batch takes (they land as one reference
	// message, so only a full stream refuses them).
	limit("lim.events", 3)
	refused("INSERT INTO lim SELECT g FROM generate_series(1, 1500) g")
	holds("lim", "lim.events", 3, "42", "4 63")
	limit("lim.events", -1)
	testutil.MustExec(t, conn, "INSERT INTO lim SELECT g FROM generate_series(1, 1500) g")
	wantRow(t, conn, "SELECT count(*), sum(v) FROM lim", "1503 1125792")
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n, s FROM lim_sum", "1504 1125813")

	// A stream bound to a JetStream stream that does not allow atomic
	// publish, made by others who read rows from it: its rows go one
	// message each, as before, so a limit can leave part of a write.
	limit("ext.events", 3)
	err := execAll(conn, "INSERT INTO ext VALUES (10), (11), (12)")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "08007" || !strings.Contains(pe.Message, "only 2 of the 3 rows") {
		t.Errorf("INSERT of 3 rows into ext with room for 2: %v, want 08007 naming the 2 rows that landed", err)
	}
	holds("ext", "ext.events", 3, "22", "3 22")
	limit("ext.events", -1)
	testutil.MustExec(t, conn, "INSERT INTO ext VALUES (20), (21)", "FLUSH")
	holds("ext", "ext.events", 5, "63", "5 63")
	for seq := uint64(1); seq <= 5; seq++ {
		m, err := stream("ext.events").GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Streamdb-Txn") != "" || !strings.HasPrefix(string(m.Data), "{") {
			t.Errorf("message %d of ext.events is %q (headers %v), want one row", seq, m.Data, m.Header)
		}
	}
}
