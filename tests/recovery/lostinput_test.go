package recovery

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestLostInput binds a stream to a JetStream stream that keeps only 10
// messages, stops the server, publishes past that limit so that messages
// the view still needs are discarded, and restarts: the view must report
// status 'failed: ...' naming the missing sequences, a read of it must fail
// with that error (not return its stale rows), FLUSH must not be failed by
// it, and the server must go on serving the other views.
func TestLostInput(t *testing.T) {
	natsURL := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, natsURL)
	ctx := testutil.Context(t, time.Minute)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "limited", Subjects: []string{"lim.events"}, MaxMsgs: 10, Discard: jetstream.DiscardOld,
		Storage: jetstream.FileStorage,
	}); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		`CREATE STREAM lim (id BIGINT) WITH (subject = 'lim.events', format = 'json')`,
		`CREATE STREAM fine (id BIGINT) WITH (subject = 'fine.events', format = 'json')`,
		`CREATE MATERIALIZED VIEW lim_count AS SELECT count(*) AS n, max(id) AS last FROM lim`,
		`CREATE MATERIALIZED VIEW fine_count AS SELECT count(*) AS n, max(id) AS last FROM fine`)
	for _, m := range queryMaps(t, conn, "SHOW STREAMS") {
		if m["name"] == "lim" && m["jetstream_stream"] != "limited" {
			t.Fatalf("stream lim is bound to JetStream stream %q, want the existing \"limited\"", m["jetstream_stream"])
		}
	}
	msgs := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprintf(`{"id":%d}`, i))
		}
		return out
	}
	testutil.Publish(t, js, "lim.events", msgs(1, 5)...)
	testutil.Publish(t, js, "fine.events", msgs(1, 5)...)
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n, last FROM lim_count", "5 5")

	srv.Stop(t)
	// Sequences 6..35; the stream keeps only 26..35, so 6..25 are gone.
	testutil.Publish(t, js, "lim.events", msgs(6, 35)...)
	testutil.Publish(t, js, "fine.events", msgs(6, 8)...)
	srv.Restart(t)
	conn = srv.Conn(t)

	var status string
	testutil.Poll(t, 30*time.Second, "lim_count fails", func() error {
		status = viewStatus(t, conn, "lim_count")
		if !strings.HasPrefix(status, "failed: ") {
			return fmt.Errorf("status %q", status)
		}
		return nil
	})
	t.Logf("lim_count status: %s", status)
	if !strings.Contains(status, "6..25") {
		t.Errorf("status %q does not name the missing sequences 6..25", status)
	}
	// FLUSH waits for the running views and leaves the stopped one out.
	if err := testutil.ExecSimple(conn, time.Minute, "FLUSH"); err != nil {
		t.Errorf("FLUSH failed because of the stopped view lim_count: %v", err)
	}
	// Reading the stopped view fails with the cause; the others go on.
	if err := testutil.ExecSimple(conn, time.Minute, "SELECT n, last FROM lim_count"); err == nil {
		t.Errorf("reading lim_count succeeded although it stopped")
	} else if !strings.Contains(err.Error(), "lim_count") || !strings.Contains(err.Error(), "6..25") {
		t.Errorf("reading lim_count: error %q does not name the view and the missing sequences", err)
	}
	if s := viewStatus(t, conn, "fine_count"); s != "running" {
		t.Errorf("fine_count status %q, want running", s)
	}
	testutil.Publish(t, js, "fine.events", msgs(9, 12)...)
	testutil.Poll(t, 15*time.Second, "fine_count catches up", func() error {
		_, rows := mustQuery(t, conn, "SELECT n, last FROM fine_count")
		if got := strings.Join(rows[0], " "); got != "12 12" {
			return fmt.Errorf("fine_count = %s", got)
		}
		return nil
	})
	testutil.MustExec(t, conn, `CREATE MATERIALIZED VIEW fine_sum AS SELECT sum(id) AS s FROM fine`)
	wantRow(t, conn, "SELECT s FROM fine_sum", "78")
}
