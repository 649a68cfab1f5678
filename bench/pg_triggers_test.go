package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// pgTriggersSQL keeps the eight aggregates of manyViewsSQL in PostgreSQL
// the way users maintain summaries without a streaming system: one
// statement-level AFTER INSERT trigger that folds each statement's new
// rows (a transition table) into eight summary tables with upserts.
// Events are only inserted, so max/min fold with GREATEST/LEAST and avg
// is kept as a sum and a count.
var pgTriggersSQL = []string{
	"CREATE TABLE ev (k bigint, v bigint)",
	"CREATE TABLE m1 (k bigint PRIMARY KEY, n bigint, total numeric)",
	"CREATE TABLE m2 (g bigint PRIMARY KEY, n bigint, total numeric)",
	"CREATE TABLE m3 (v bigint PRIMARY KEY, n bigint)",
	"CREATE TABLE m4 (g bigint PRIMARY KEY, n bigint, top bigint)",
	"CREATE TABLE m5 (g bigint PRIMARY KEY, n bigint, low bigint)",
	"CREATE TABLE m6 (g bigint PRIMARY KEY, n bigint, s numeric)",
	"CREATE TABLE m7 (g bigint PRIMARY KEY, n bigint, keys numeric)",
	"CREATE TABLE m8 (id int PRIMARY KEY, n bigint, total numeric)",
	`CREATE FUNCTION fold_ev() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO m1 SELECT k, count(*), sum(v) FROM new_rows GROUP BY k
    ON CONFLICT (k) DO UPDATE SET n = m1.n + excluded.n, total = m1.total + excluded.total;
  INSERT INTO m2 SELECT k % 10, count(*), sum(v) FROM new_rows GROUP BY k % 10
    ON CONFLICT (g) DO UPDATE SET n = m2.n + excluded.n, total = m2.total + excluded.total;
  INSERT INTO m3 SELECT v, count(*) FROM new_rows GROUP BY v
    ON CONFLICT (v) DO UPDATE SET n = m3.n + excluded.n;
  INSERT INTO m4 SELECT k % 1000, count(*), max(v) FROM new_rows GROUP BY k % 1000
    ON CONFLICT (g) DO UPDATE SET n = m4.n + excluded.n, top = greatest(m4.top, excluded.top);
  INSERT INTO m5 SELECT v % 7, count(*), min(k) FROM new_rows GROUP BY v % 7
    ON CONFLICT (g) DO UPDATE SET n = m5.n + excluded.n, low = least(m5.low, excluded.low);
  INSERT INTO m6 SELECT k % 100, count(*), sum(v) FROM new_rows GROUP BY k % 100
    ON CONFLICT (g) DO UPDATE SET n = m6.n + excluded.n, s = m6.s + excluded.s;
  INSERT INTO m7 SELECT v % 10, count(*), sum(k) FROM new_rows GROUP BY v % 10
    ON CONFLICT (g) DO UPDATE SET n = m7.n + excluded.n, keys = m7.keys + excluded.keys;
  INSERT INTO m8 SELECT 1, count(*), sum(v) FROM new_rows
    ON CONFLICT (id) DO UPDATE SET n = m8.n + excluded.n, total = m8.total + excluded.total;
  RETURN NULL;
END $$`,
	"CREATE TRIGGER fold AFTER INSERT ON ev REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION fold_ev()",
}

// pgTriggersBatch is the rows per INSERT statement (and so per trigger
// run): a micro-batch, as an ingest job would write.
const pgTriggersBatch = 1000

// pgTriggersRate inserts the many-views backlog (the same keys and values)
// into PostgreSQL in batches of pgTriggersBatch rows, each folded into the
// eight summaries by the trigger, and returns the events/s. The rows are
// generated inside PostgreSQL (generate_series), so the figure leaves out
// the client round trip of the data, which favours PostgreSQL.
func pgTriggersRate(b *testing.B, sz sizes) float64 {
	pg := testutil.StartPostgres(b)
	defer pg.Stop(b)
	conn := pg.Conn(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	for _, q := range pgTriggersSQL {
		if _, err := conn.Exec(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	m, keys := sz.backlog, sz.backlogKeys
	ins := fmt.Sprintf("INSERT INTO ev SELECT (i %% %d) * %d %% %d, i %% 100 FROM generate_series($1::bigint, $2::bigint) AS i", keys, permPrime, keys)
	start := time.Now()
	for from := 0; from < m; from += pgTriggersBatch {
		to := min(from+pgTriggersBatch, m) - 1
		if _, err := conn.Exec(ctx, ins, from, to); err != nil {
			b.Fatalf("inserting rows %d..%d: %v", from, to, err)
		}
	}
	d := time.Since(start)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT n FROM m8").Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n != int64(m) {
		b.Fatalf("PostgreSQL's m8 counts %d events, %d were inserted", n, m)
	}
	rate := float64(m) / d.Seconds()
	cas := "PostgreSQL, statement-level triggers"
	report.Add(manyViewsBench, cas, fmt.Sprintf("time to insert and fold every event, %d rows per INSERT", pgTriggersBatch), d.Seconds(), "s")
	report.Add(manyViewsBench, cas, "rate", rate, "events/s")
	return rate
}
