package e2e

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"

	"streamdb/tests/testutil"
)

// streamMetadataViews are views over a stream on the subject pattern
// orders.> with INCLUDE columns, each with the same query over a
// PostgreSQL table holding the same rows.
var streamMetadataViews = []struct{ name, query string }{
	{"md_by_region", "SELECT region, kind, count(*) AS n, sum(amount) AS total FROM ev GROUP BY region, kind"},
	{"md_by_tier", "SELECT doc->'user'->>'tier' AS tier, region, count(*) AS n, sum((doc->'user'->>'id')::bigint) AS users FROM ev GROUP BY 1, 2"},
	{"md_by_trace", "SELECT trace, count(*) AS n, min(seq) AS first_seq, max(ts) AS last_ts FROM ev WHERE trace IS NOT NULL GROUP BY trace"},
	{"md_by_subject", "SELECT subj, count(*) AS n, max(seq) AS last_seq, min(ts) AS first_ts FROM ev WHERE kind <> 'cancelled' GROUP BY subj"},
}

// TestStreamSubjectPatternMetadata: producers publish nested JSON events
// on orders.<region>.<kind> with and without a Trace-Id header through
// nats.go; a stream on the pattern orders.> includes the subject, two of
// its tokens, the header, the JetStream timestamp and the sequence.
// Views on extracted fields and on the metadata, and the stream read
// ad hoc, agree with PostgreSQL 15 fed the same rows (the metadata taken
// from JetStream), before and after a kill -9 that lands while the views
// are still taking a batch in.
func TestStreamSubjectPatternMetadata(t *testing.T) {
	const seed = 43
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn, `CREATE STREAM ev (id bigint, doc jsonb, amount numeric)
		INCLUDE subject AS subj INCLUDE subject_token 2 AS region INCLUDE subject_token -1 AS kind
		INCLUDE header 'Trace-Id' AS trace INCLUDE timestamp AS ts INCLUDE sequence AS seq
		WITH (subject = 'orders.>')`)
	exec(t, pg, `CREATE TABLE ev (id bigint, doc jsonb, amount numeric, subj text, region text, kind text, trace text, ts timestamptz, seq bigint)`)
	for _, v := range streamMetadataViews {
		exec(t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
	}
	regions := []string{"eu", "us", "ap"}
	kinds := []string{"created", "paid", "cancelled"}
	tiers := []string{"gold", "silver", "bronze"}
	next := 0
	// round publishes n events and inserts the same rows into PostgreSQL,
	// with the sequence and time JetStream stored each one at.
	round := func(n int) {
		t.Helper()
		_, js := testutil.JetStream(t, srv.NATSURL())
		ctx := testutil.Context(t, time.Minute)
		stream, err := js.Stream(ctx, "streamdb_ev")
		if err != nil {
			t.Fatal(err)
		}
		batch := &pgx.Batch{}
		for range n {
			next++
			region, kind := regions[rng.Intn(len(regions))], kinds[rng.Intn(len(kinds))]
			doc := fmt.Sprintf(`{"user": {"id": %d, "tier": %q}, "items": [{"sku": "s%d"}]}`, rng.Intn(20), tiers[rng.Intn(len(tiers))], rng.Intn(5))
			amount := fmt.Sprintf("%d.%02d", rng.Intn(500), rng.Intn(100))
			m := nats.NewMsg("orders." + region + "." + kind)
			m.Data = []byte(fmt.Sprintf(`{"id": %d, "doc": %s, "amount": %s, "subj": "not the subject"}`, next, doc, amount))
			var trace any
			if rng.Intn(3) > 0 {
				tr := fmt.Sprintf("trace-%d", rng.Intn(8))
				m.Header.Set("Trace-Id", tr)
				trace = tr
			}
			ack, err := js.PublishMsg(ctx, m)
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			stored, err := stream.GetMsg(ctx, ack.Sequence)
			if err != nil {
				t.Fatal(err)
			}
			batch.Queue("INSERT INTO ev VALUES ($1, $2::jsonb, $3::numeric, $4, $5, $6, $7, $8, $9)",
				next, doc, amount, m.Subject, region, kind, trace, stored.Time, int64(ack.Sequence))
		}
		if err := pg.SendBatch(testutil.Context(t, time.Minute), batch).Close(); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		for _, v := range streamMetadataViews {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
		const adhoc = "SELECT id, doc, amount, subj, region, kind, trace, ts, seq FROM ev"
		if diff := testutil.RowsDiff(t, conn, adhoc, pg, adhoc); diff != "" {
			t.Fatalf("seed %d, %s: the stream read ad hoc has %s", seed, when, diff)
		}
	}
	round(150)
	compare("first round")
	round(150)
	srv.Kill(t) // before any FLUSH: the views are taking the round in
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after kill -9")
	round(100)
	compare("after kill -9 and a round")
	if got := strings.Join(textRows(t, conn, "SELECT count(DISTINCT subj) FROM ev"), ""); got != "9" {
		t.Errorf("the stream read %s distinct subjects, want 9", got)
	}
}
