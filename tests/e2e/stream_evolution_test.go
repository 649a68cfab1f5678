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

// streamEvolutionViews are the views of TestStreamEvolution created with
// the stream, each with the same query over PostgreSQL's table.
var streamEvolutionViews = []struct{ name, query string }{
	{"se_by_region", "SELECT region, kind, count(*) AS n, sum(amount) AS total FROM ev GROUP BY region, kind"},
	{"se_by_user", "SELECT user_id, count(*) AS n, sum(amount) AS total FROM ev WHERE kind <> 'cancelled' GROUP BY user_id"},
	{"se_by_discount", "SELECT t.discount, ev.region, count(*) AS n FROM ev JOIN tiers t ON t.name = ev.doc->'user'->>'tier' GROUP BY t.discount, ev.region"},
	{"se_small_users", "SELECT id, trace, doc->'items'->0->>'sku' AS sku FROM ev WHERE (doc->'user'->>'id')::int < 5"},
}

// streamEvolutionCouponViews read the column added mid-run.
var streamEvolutionCouponViews = []struct{ name, query string }{
	{"se_by_coupon", "SELECT coupon, region, count(*) AS n, sum(amount) AS total FROM ev GROUP BY coupon, region"},
	{"se_coupon_users", "SELECT user_id, coupon FROM ev WHERE coupon IS NOT NULL AND user_id < 10"},
}

// TestStreamEvolution is issue 40's end-to-end case. A producer publishes
// nested JSON on orders.<region>.<kind> with a Trace-Id header on some
// messages; the stream reads the pattern orders.>, with INCLUDE columns
// (two subject tokens, the header), a jsonb column and a generated
// column; views group, join (with a table) and filter on extracted
// values. Mid-run the producer adds a field "coupon" and the user runs
// ALTER STREAM ADD COLUMN for it: messages carrying it fill it, earlier
// ones read NULL, the views created before keep their state, and views
// created after read it. The server is killed with SIGKILL twice while
// views take rounds in. PostgreSQL 15 gets the same rows in a table (the
// generated column its own, the column added by ALTER TABLE) and every
// view and the stream read ad hoc are compared with it.
func TestStreamEvolution(t *testing.T) {
	const seed = 40
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	srv := startServer(t)
	conn := srv.Conn(t)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, conn, `CREATE STREAM ev (id bigint, doc jsonb, amount numeric,
			user_id bigint GENERATED ALWAYS AS ((doc->'user'->>'id')::bigint) STORED)
		INCLUDE subject_token 2 AS region INCLUDE subject_token -1 AS kind INCLUDE header 'Trace-Id' AS trace
		WITH (subject = 'orders.>')`)
	exec(t, pg, `CREATE TABLE ev (id bigint, doc jsonb, amount numeric,
		user_id bigint GENERATED ALWAYS AS ((doc->'user'->>'id')::bigint) STORED, region text, kind text, trace text)`)
	for _, c := range []*pgx.Conn{conn, pg} {
		exec(t, c, `CREATE TABLE tiers (name text PRIMARY KEY, discount int)`,
			`INSERT INTO tiers VALUES ('gold', 20), ('silver', 10), ('bronze', 0)`)
	}
	for _, v := range streamEvolutionViews {
		exec(t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
	}
	regions := []string{"eu", "us", "ap"}
	kinds := []string{"created", "paid", "cancelled"}
	tiers := []string{"gold", "silver", "bronze", "platinum"} // platinum joins no tier
	next := 0
	coupons := false // the producer sends the field
	altered := false // both sides have the column
	couponOf := map[int]string{}
	// round publishes n events and inserts the same rows into PostgreSQL.
	round := func(n int) {
		t.Helper()
		_, js := testutil.JetStream(t, srv.NATSURL())
		ctx := testutil.Context(t, time.Minute)
		batch := &pgx.Batch{}
		for range n {
			next++
			region, kind := regions[rng.Intn(len(regions))], kinds[rng.Intn(len(kinds))]
			doc := fmt.Sprintf(`{"user": {"id": %d, "tier": %q, "name": "ü%d"}, "items": [{"sku": "s%d", "qty": %d}], "tags": []}`,
				rng.Intn(20), tiers[rng.Intn(len(tiers))], rng.Intn(3), rng.Intn(5), rng.Intn(3))
			amount := fmt.Sprintf("%d.%02d", rng.Intn(500), rng.Intn(100))
			body := fmt.Sprintf(`{"id": %d, "doc": %s, "amount": %s`, next, doc, amount)
			var coupon any
			if coupons && rng.Intn(2) == 0 {
				c := fmt.Sprintf("C%d", rng.Intn(4))
				body += fmt.Sprintf(`, "coupon": %q`, c)
				coupon, couponOf[next] = c, c
			}
			m := nats.NewMsg("orders." + region + "." + kind)
			m.Data = []byte(body + "}")
			var trace any
			if rng.Intn(3) > 0 {
				tr := fmt.Sprintf("trace-%d", rng.Intn(8))
				m.Header.Set("Trace-Id", tr)
				trace = tr
			}
			if _, err := js.PublishMsg(ctx, m); err != nil {
				t.Fatalf("publish: %v", err)
			}
			if altered {
				batch.Queue("INSERT INTO ev (id, doc, amount, region, kind, trace, coupon) VALUES ($1, $2::jsonb, $3::numeric, $4, $5, $6, $7)",
					next, doc, amount, region, kind, trace, coupon)
			} else {
				batch.Queue("INSERT INTO ev (id, doc, amount, region, kind, trace) VALUES ($1, $2::jsonb, $3::numeric, $4, $5, $6)",
					next, doc, amount, region, kind, trace)
			}
		}
		if err := pg.SendBatch(testutil.Context(t, time.Minute), batch).Close(); err != nil {
			t.Fatal(err)
		}
	}
	compare := func(when string) {
		t.Helper()
		flush(t, conn)
		views := streamEvolutionViews
		adhoc := "SELECT id, doc, amount, user_id, region, kind, trace FROM ev"
		if altered {
			views = append(views[:len(views):len(views)], streamEvolutionCouponViews...)
			adhoc = "SELECT id, doc, amount, user_id, region, kind, trace, coupon FROM ev"
		}
		for _, v := range views {
			if diff := testutil.RowsDiff(t, conn, "SELECT * FROM "+v.name, pg, v.query); diff != "" {
				t.Fatalf("seed %d, %s: view %s has %s", seed, when, v.name, diff)
			}
		}
		if diff := testutil.RowsDiff(t, conn, adhoc, pg, adhoc); diff != "" {
			t.Fatalf("seed %d, %s: the stream read ad hoc has %s", seed, when, diff)
		}
	}

	round(120)
	compare("first round")
	round(120)
	srv.Kill(t) // before any FLUSH: the views are taking the round in
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after the first kill -9")

	// The producer adds the field, then the user adds the column. A
	// column reads its member from every message that has it, so the
	// messages sent in between read it too; PostgreSQL's rows get it
	// when the column is added.
	coupons = true
	round(60)
	exec(t, conn, "ALTER STREAM ev ADD COLUMN coupon text")
	exec(t, pg, "ALTER TABLE ev ADD COLUMN coupon text")
	for id, c := range couponOf {
		exec(t, pg, fmt.Sprintf("UPDATE ev SET coupon = '%s' WHERE id = %d", c, id))
	}
	altered = true
	for _, v := range streamEvolutionCouponViews {
		exec(t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
	}
	compare("after ADD COLUMN")
	round(120)
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare("after ADD COLUMN and a second kill -9")
	round(60)
	compare("at the end")

	if got := strings.Join(textRows(t, conn, "SELECT count(*) FILTER (WHERE coupon IS NULL), count(*) FILTER (WHERE id <= 240 AND coupon IS NOT NULL) FROM ev"), ""); !strings.HasSuffix(got, " 0") {
		t.Errorf("rows before the producer sent coupon with a coupon: %s, want none", got)
	}
}
