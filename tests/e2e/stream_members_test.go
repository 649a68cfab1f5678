package e2e

import (
	"fmt"
	"testing"

	"streamdb/tests/testutil"
)

// TestStreamMemberCounts checks the per-stream counts of message member
// keys no column matches and of columns no message has, in
// streamdb_streams and the metrics, and the NOTICE at CREATE MATERIALIZED
// VIEW when the stream's latest messages lack a column the view reads;
// after ALTER STREAM ADD COLUMN the key the new column matches is no
// longer reported, though the views' running readers started without it.
func TestStreamMemberCounts(t *testing.T) {
	srv := startServer(t)
	conn, notices := noticeConn(t, srv.DSN())
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE STREAM ev (id bigint, customer_id bigint, amount int, note text) WITH (subject = 'members.ev')")
	for i := 1; i <= 5; i++ {
		testutil.Publish(t, js, "members.ev", fmt.Sprintf(`{"id": %d, "customerId": %d, "amount": 10, "extra": true}`, i, i%2))
	}
	for i := 6; i <= 7; i++ {
		testutil.Publish(t, js, "members.ev", fmt.Sprintf(`{"id": %d, "amount": 1}`, i))
	}
	notices()

	exec(t, conn, "CREATE MATERIALIZED VIEW by_customer AS SELECT customer_id, sum(amount) AS total FROM ev GROUP BY customer_id")
	want := `the latest 7 messages of stream ev have no member for column customer_id, which materialized view by_customer reads, so it is NULL in their rows | ` +
		`They carry the keys "amount", "customerId", "extra", "id". A column reads the member of its exact name: declare it as the producer names the key (a quoted identifier keeps its case), ` +
		`or read nested or changing members through a jsonb column (doc->>'key'), or the whole message as one jsonb column (CREATE STREAM ... WITH (whole_message = true)).`
	if got := notices(); len(got) != 1 || got[0] != want {
		t.Fatalf("CREATE MATERIALIZED VIEW reading a column the messages lack: notices %q, want %q", got, want)
	}
	exec(t, conn, "CREATE MATERIALIZED VIEW amounts AS SELECT id, amount FROM ev")
	if got := notices(); len(got) != 0 {
		t.Fatalf("CREATE MATERIALIZED VIEW reading columns the messages have: notices %q", got)
	}
	flush(t, conn)

	wantRows(t, conn, "SELECT decoded_messages, unmatched_key_messages, unmatched_keys, never_seen_columns FROM streamdb_streams WHERE name = 'ev'",
		"7 5 customerId (5), extra (5) customer_id, note")
	fams := scrape(t, srv)
	if got := metricValue(t, fams, "streamdb_source_unmatched_key_messages_total", "stream", "ev", "key", "customerId"); got != 5 {
		t.Errorf("streamdb_source_unmatched_key_messages_total{stream=ev,key=customerId} = %v, want 5", got)
	}
	if got := metricValue(t, fams, "streamdb_source_never_seen_columns", "stream", "ev"); got != 2 {
		t.Errorf("streamdb_source_never_seen_columns{stream=ev} = %v, want 2", got)
	}

	// The producer's extra field gets a column; the running views keep
	// their readers, which still count it, but it is a column now.
	exec(t, conn, "ALTER STREAM ev ADD COLUMN extra boolean")
	testutil.Publish(t, js, "members.ev", `{"id": 8, "customerId": 8, "amount": 1, "extra": false, "note": "n"}`)
	flush(t, conn)
	wantRows(t, conn, "SELECT decoded_messages, unmatched_key_messages, unmatched_keys, never_seen_columns FROM streamdb_streams WHERE name = 'ev'",
		"8 6 customerId (6) customer_id")
	wantRows(t, conn, "SELECT customer_id, total FROM by_customer", "NULL 53")
}
