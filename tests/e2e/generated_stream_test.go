package e2e

import (
	"fmt"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestStreamGeneratedColumns: a stream's generated columns are computed
// from the messages producers publish, once for the views that share the
// stream's reader; a message whose expression fails is skipped by every
// view and counted; the views compute them the same way after a restart
// (the expressions are part of their recorded plans).
func TestStreamGeneratedColumns(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		`CREATE STREAM events (doc jsonb, user_id bigint GENERATED ALWAYS AS ((doc->'user'->>'id')::bigint) STORED,
			tier text GENERATED ALWAYS AS (upper(doc->'user'->>'tier')) STORED) WITH (subject = 'events.gen')`,
		`CREATE MATERIALIZED VIEW by_user AS SELECT user_id, tier, count(*) AS n FROM events GROUP BY user_id, tier`,
		`CREATE MATERIALIZED VIEW total AS SELECT count(*) AS n FROM events`)
	_, js := testutil.JetStream(t, srv.NATSURL())
	publish := func(msgs ...string) {
		t.Helper()
		testutil.Publish(t, js, "events.gen", msgs...)
	}
	publish(`{"doc": {"user": {"id": 7, "tier": "gold"}}}`,
		`{"doc": {"user": {"id": "not a number"}}}`,
		`{"doc": {"user": {"id": "8"}}, "user_id": 99}`)
	waitRows := func(sql string, want ...string) {
		t.Helper()
		poll(t, 30*time.Second, func() error {
			got, err := textRowsErr(testutil.Context(t, time.Minute), conn, sql)
			if err != nil {
				return err
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Errorf("%s is %q, want %q", sql, got, want)
			}
			return nil
		})
	}
	waitRows(`SELECT * FROM by_user ORDER BY user_id`, "7 GOLD 1", "8 NULL 1")
	waitRows(`SELECT * FROM total`, "2")
	wantRows(t, conn, `SHOW STREAMS`, "events events.gen streamdb_events json doc jsonb, user_id bigint, tier text 1")

	srv.Restart(t)
	conn = srv.Conn(t)
	publish(`{"doc": {"user": {"id": 7, "tier": "Gold"}}}`)
	waitRows(`SELECT * FROM by_user ORDER BY user_id`, "7 GOLD 2", "8 NULL 1")
	waitRows(`SELECT * FROM total`, "3")
}
