package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/nexmark"
	"streamdb/tests/testutil"
)

const nxBench = "nexmark"

// nxSizes are the Nexmark parameters of one mode.
type nxSizes struct {
	events      uint64        // backlog: Nexmark events of all three kinds
	steadyRate  int           // freshness: events/s published while probing
	steadyTime  time.Duration // how long the steady load runs
	timeout     time.Duration // per query: a slower catch-up is reported as timed out
	maxRSSMB    float64       // per query: a server above this is killed and reported
	queries     map[string]bool
	pgBatchRows int // rows per COPY into PostgreSQL (one trigger firing each)
	rounds      int // catch-up rounds (ceilings and queries); figures are medians
}

func nexmarkSizes(mode string) (nxSizes, error) {
	s := nxSizes{maxRSSMB: 8192, pgBatchRows: 10_000, rounds: 1}
	switch mode {
	case "quick":
		s.events, s.steadyRate, s.steadyTime, s.timeout = 400_000, 20_000, 20*time.Second, 5*time.Minute
		s.rounds = 3
	case "full":
		// Sized so that each query takes about a minute on the 2-core
		// machine: in quick runs q0-q2 caught up at ~90-140K events/s and
		// q4, q5, q7 at ~25-40K, measured before the streams declared
		// watermarks: q4's and q7's joins now free state by watermark, and
		// q7 catches up several times faster.
		s.events, s.steadyRate, s.steadyTime, s.timeout = 2_000_000, 50_000, 60*time.Second, 20*time.Minute
	default:
		return s, fmt.Errorf("BENCH_MODE=%q: want quick or full", mode)
	}
	for _, o := range []struct {
		env string
		set func(int)
	}{
		{"BENCH_NEXMARK_EVENTS", func(n int) { s.events = uint64(n) }},
		{"BENCH_NEXMARK_RATE", func(n int) { s.steadyRate = n }},
		{"BENCH_NEXMARK_STEADY_SECONDS", func(n int) { s.steadyTime = time.Duration(n) * time.Second }},
		{"BENCH_NEXMARK_TIMEOUT_SECONDS", func(n int) { s.timeout = time.Duration(n) * time.Second }},
		{"BENCH_NEXMARK_MAX_RSS_MB", func(n int) { s.maxRSSMB = float64(n) }},
		{"BENCH_NEXMARK_ROUNDS", func(n int) { s.rounds = n }},
	} {
		if v := os.Getenv(o.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return s, fmt.Errorf("%s=%q: want a positive integer", o.env, v)
			}
			o.set(n)
		}
	}
	if v := os.Getenv("BENCH_NEXMARK_QUERIES"); v != "" {
		s.queries = map[string]bool{}
		for _, q := range strings.Split(v, ",") {
			s.queries[strings.TrimSpace(q)] = true
		}
	}
	return s, nil
}

// nxStreams declares the three Nexmark streams; timestamps arrive as epoch
// milliseconds. Each declares the watermark of the Flink and RisingWave
// Nexmark suites, date_time less 4 seconds, so that joins and window
// aggregates free closed windows' state. The generator stamps event n at
// BaseTime + n/EventRate and publishes each stream in event order, so no
// row is late and every query's result is what it would be without
// watermarks.
var nxStreams = []string{
	`CREATE STREAM person (id BIGINT, name VARCHAR, email_address VARCHAR, credit_card VARCHAR, city VARCHAR,
	  state VARCHAR, date_time TIMESTAMP, extra VARCHAR, WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (subject = 'nexmark.person', format = 'json')`,
	`CREATE STREAM auction (id BIGINT, item_name VARCHAR, description VARCHAR, initial_bid BIGINT, reserve BIGINT,
	  date_time TIMESTAMP, expires TIMESTAMP, seller BIGINT, category BIGINT, extra VARCHAR,
	  WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND) WITH (subject = 'nexmark.auction', format = 'json')`,
	`CREATE STREAM bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
	  date_time TIMESTAMP, extra VARCHAR, WATERMARK FOR date_time AS date_time - INTERVAL '4' SECOND)
	  WITH (subject = 'nexmark.bid', format = 'json')`,
}

// nxQuery is one Nexmark query as a materialized view named after it.
type nxQuery struct {
	name  string
	kept  string         // what the view keeps of the query's result
	note  string         // how it differs from the textbook formulation
	reads []nexmark.Kind // the streams it reads
	sql   string         // the view body
}

var (
	bidOnly        = []nexmark.Kind{nexmark.KindBid}
	personAuction  = []nexmark.Kind{nexmark.KindPerson, nexmark.KindAuction}
	auctionAndBids = []nexmark.Kind{nexmark.KindAuction, nexmark.KindBid}
)

// nxGroupBy is the GROUP BY that PostgreSQL maintains too (see
// benchNexmarkPostgres) and that the checkpoint comparison runs.
const nxGroupBy = "SELECT auction, count(*) AS n, max(price) AS m FROM bid GROUP BY auction"

// nxQueries follow the standard Nexmark SQL (as in the Flink and
// RisingWave Nexmark suites), written for streamdb's dialect.
var nxQueries = []nxQuery{
	{name: "q0", kept: "count(*), sum(price) of the pass-through result (1 row)", reads: bidOnly,
		sql: "SELECT count(*) AS n, sum(price) AS s FROM (SELECT auction, bidder, price, date_time, extra FROM bid) q0"},
	{name: "q1", kept: "count(*), sum(price) of the converted result (1 row)", reads: bidOnly,
		sql: "SELECT count(*) AS n, sum(price) AS s FROM (SELECT auction, bidder, 0.908 * price AS price, date_time, extra FROM bid) q1"},
	{name: "q2", kept: "whole result", reads: bidOnly,
		sql: "SELECT auction, price FROM bid WHERE auction % 123 = 0"},
	{name: "q3", kept: "whole result", reads: personAuction,
		sql: `SELECT P.name, P.city, P.state, A.id FROM auction AS A, person AS P
		      WHERE A.seller = P.id AND A.category = 10 AND (P.state = 'OR' OR P.state = 'ID' OR P.state = 'CA')`},
	{name: "q4", kept: "whole result (5 categories)", reads: auctionAndBids,
		sql: `SELECT Q.category, avg(Q.final) AS avg_final FROM (
		        SELECT max(B.price) AS final, A.category FROM auction A, bid B
		        WHERE A.id = B.auction AND B.date_time BETWEEN A.date_time AND A.expires GROUP BY A.id, A.category) Q
		      GROUP BY Q.category`},
	{name: "q5", kept: "whole result", reads: bidOnly,
		sql: `SELECT AuctionBids.auction, AuctionBids.num FROM (
		        SELECT auction, count(*) AS num, window_start AS starttime
		        FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY window_start, auction) AS AuctionBids
		      JOIN (
		        SELECT max(CountBids.num) AS maxn, CountBids.starttime_c FROM (
		          SELECT count(*) AS num, window_start AS starttime_c
		          FROM HOP(bid, date_time, INTERVAL '2' SECOND, INTERVAL '10' SECOND) GROUP BY auction, window_start) AS CountBids
		        GROUP BY CountBids.starttime_c) AS MaxBids
		      ON AuctionBids.starttime = MaxBids.starttime_c AND AuctionBids.num >= MaxBids.maxn`},
	{name: "q7", kept: "whole result", reads: bidOnly,
		sql: `SELECT B.auction, B.price, B.bidder, B.date_time FROM bid B
		      JOIN (SELECT max(price) AS maxprice, window_end AS date_time
		            FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_end) B1
		      ON B.price = B1.maxprice
		      WHERE B.date_time BETWEEN B1.date_time - INTERVAL '10' SECOND AND B1.date_time`},
	{name: "q8", kept: "whole result", reads: personAuction,
		sql: `SELECT P.id, P.name, P.starttime FROM (
		        SELECT id, name, window_start AS starttime, window_end AS endtime
		        FROM TUMBLE(person, date_time, INTERVAL '10' SECOND) GROUP BY id, name, window_start, window_end) P
		      JOIN (
		        SELECT seller, window_start AS starttime, window_end AS endtime
		        FROM TUMBLE(auction, date_time, INTERVAL '10' SECOND) GROUP BY seller, window_start, window_end) A
		      ON P.id = A.seller AND P.starttime = A.starttime AND P.endtime = A.endtime`},
	{name: "groupby", kept: "whole result (one row per auction)", reads: bidOnly,
		note: "not a Nexmark query: the GROUP BY that PostgreSQL maintains in the baseline",
		sql:  nxGroupBy},
}

// nxRun is the outcome of one catch-up run.
type nxRun struct {
	dur     time.Duration
	peakRSS float64
	rows    int64
	load    float64 // 1-minute load average at the end
	failure string  // "not supported: ...", "timed out ...", "aborted ..."; empty when it ran
	logs    string  // the server's log during the run
}

// BenchmarkNexmark publishes a Nexmark backlog once, then on fresh servers
// over copies of it measures each query's catch-up rate, the raw JetStream
// read rate (the ceiling), PostgreSQL maintaining the same GROUP BY, the
// cost of periodic checkpoints, and freshness under a steady load.
func BenchmarkNexmark(b *testing.B) {
	sz, err := nexmarkSizes(report.Mode)
	if err != nil {
		b.Fatal(err)
	}
	loadStart := loadAvg()
	gen := nexmark.NewGenerator(nexmark.Config{Seed: 1})
	cfg := gen.Config()
	var counts [3]uint64
	for k := range counts {
		counts[k] = nexmark.Count(nexmark.Kind(k), sz.events)
	}
	report.Configf("nexmark: backlog of %d events (%d persons, %d auctions, %d bids; seed %d; event time %d events/s, so %.0f s of event time); "+
		"each query a fresh server (default settings: barriers 20ms, checkpoints every 1s) on a copy of the backlog's data directory; "+
		"catch-up = CREATE MATERIALIZED VIEW + FLUSH, medians of %d rounds; per-query limits %v and %.0f MiB RSS",
		sz.events, counts[0], counts[1], counts[2], cfg.Seed, cfg.EventRate, float64(sz.events)/float64(cfg.EventRate), sz.rounds, sz.timeout, sz.maxRSSMB)

	// The backlog, published once into a template data directory.
	template := b.TempDir()
	s := startServer(b, template, map[string]string{"execution.checkpointing.interval": "0"})
	conn := s.Conn(b)
	for _, ddl := range nxStreams {
		execTimed(b, conn, ddl)
	}
	st, err := nexmark.Publish(context.Background(), s.NATSURL(), gen, nexmark.PublishOptions{Events: sz.events})
	if err != nil {
		b.Fatalf("publishing the backlog: %v", err)
	}
	report.Add(nxBench, "backlog", "publish (acked, one connection per subject)", float64(sz.events)/st.Elapsed.Seconds(), "events/s")
	report.Add(nxBench, "backlog", "mean JSON event size", float64(st.Bytes)/float64(sz.events), "bytes")
	conn.Close(b.Context())
	s.Stop(b)

	// Rounds: every ceiling and query runs once per round, rounds one
	// after the other, so that the machine's swings hit all of them alike;
	// the figures are medians over the rounds (peak RSS: the maximum).
	all := []nexmark.Kind{nexmark.KindPerson, nexmark.KindAuction, nexmark.KindBid}
	var ceilings, bidCeilings []float64
	runs := map[string][]nxRun{}
	for round := 1; round <= sz.rounds; round++ {
		b.Run(fmt.Sprintf("round%d/ceiling", round), func(b *testing.B) {
			ceilings = append(ceilings, benchNexmarkCeiling(b, template, sz, counts, all, "3 streams at once"))
		})
		b.Run(fmt.Sprintf("round%d/ceiling-bid", round), func(b *testing.B) {
			bidCeilings = append(bidCeilings, benchNexmarkCeiling(b, template, sz, counts, bidOnly, "bid stream alone"))
		})
		for _, q := range nxQueries {
			if sz.queries != nil && !sz.queries[q.name] {
				continue
			}
			b.Run(fmt.Sprintf("round%d/%s", round, q.name), func(b *testing.B) {
				runs[q.name] = append(runs[q.name], nxCatchUp(b, template, q, nil, sz))
			})
		}
	}
	ceiling, bidCeiling := median(ceilings), median(bidCeilings)

	var summary strings.Builder
	summary.WriteString("Catch-up over the same backlog, each query on a fresh server. Rates count all backlog events (the Nexmark convention: a query that reads only bids still \"processes\" the stream of all events); input events/s counts only the streams the query reads.\n\n")
	fmt.Fprintf(&summary, "Each figure is the median of %d rounds (peak RSS: the largest); a round runs the ceilings and every query once, in turn.\n\n", sz.rounds)
	summary.WriteString("The ceilings read without decoding: all three streams at once (one consumer each), and the bid stream alone (what q0-q2, q5, q7 and groupby read); \"of ceiling\" is a query's input events/s over the bid stream's ceiling for queries that read only bids, over the all-streams ceiling for the others (q3 and q8 read only the small person and auction streams: their time is mostly fixed costs); \"of q0\" is its catch-up rate over q0's.\n\n")
	summary.WriteString("| query | result kept as | catch-up events/s | input events/s | of ceiling | of q0 | time s | peak RSS MiB | view rows | load at end | note |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	if ceiling > 0 {
		report.Add(nxBench, "ceiling", "median: JetStream ordered consumers, no decoding (3 streams at once)", ceiling, "events/s")
		fmt.Fprintf(&summary, "| ceiling | JetStream ordered consumers, no decoding, 3 streams at once | %.0f | %.0f | | | %.1f | | | | |\n",
			ceiling, ceiling, float64(sz.events)/ceiling)
	}
	if bidCeiling > 0 {
		report.Add(nxBench, "ceiling", "median: JetStream ordered consumer, no decoding (bid stream alone)", bidCeiling, "events/s")
		fmt.Fprintf(&summary, "| ceiling (bid) | one JetStream ordered consumer on the bid stream, no decoding | | %.0f | | | %.1f | | | | |\n",
			bidCeiling, float64(counts[nexmark.KindBid])/bidCeiling)
	}
	var groupByRate, q0Rate float64
	for _, q := range nxQueries {
		rs := runs[q.name]
		if len(rs) == 0 {
			continue
		}
		var input uint64
		for _, k := range q.reads {
			input += counts[k]
		}
		r, failure := summarizeRuns(rs)
		if failure != "" {
			report.Add(nxBench, q.name, "catch-up rate", 0, "n/a").Note = failure
			fmt.Fprintf(&summary, "| %s | %s | %s | | | | | | | %.1f | %s |\n", q.name, q.kept, failure, r.load, q.note)
			continue
		}
		rate := float64(sz.events) / r.dur.Seconds()
		inRate := float64(input) / r.dur.Seconds()
		switch q.name {
		case "groupby":
			groupByRate = inRate
		case "q0":
			q0Rate = rate
		}
		report.Add(nxBench, q.name, "catch-up rate (all events)", rate, "events/s").Note = q.kept
		report.Add(nxBench, q.name, "catch-up rate (input events)", inRate, "events/s")
		report.Add(nxBench, q.name, "server peak RSS", r.peakRSS, "MiB")
		of, ofQ0 := "", ""
		if c := ceiling; c > 0 {
			if slices.Equal(q.reads, bidOnly) && bidCeiling > 0 {
				c = bidCeiling
			}
			of = fmt.Sprintf("%.2f", inRate/c)
			report.Add(nxBench, q.name, "input rate / ceiling of its streams", inRate/c, "ratio")
		}
		if q0Rate > 0 {
			ofQ0 = fmt.Sprintf("%.2f", rate/q0Rate)
			report.Add(nxBench, q.name, "catch-up rate / q0's", rate/q0Rate, "ratio")
		}
		fmt.Fprintf(&summary, "| %s | %s | %.0f | %.0f | %s | %s | %.1f | %.0f | %d | %.1f | %s |\n",
			q.name, q.kept, rate, inRate, of, ofQ0, r.dur.Seconds(), r.peakRSS, r.rows, r.load, q.note)
	}

	var pgSummary string
	b.Run("postgres", func(b *testing.B) { pgSummary = benchNexmarkPostgres(b, gen, sz, counts, groupByRate) })
	ckptSummary := ""
	b.Run("checkpoints", func(b *testing.B) { ckptSummary = benchNexmarkCheckpoints(b, template, sz, counts) })
	freshSummary := ""
	b.Run("freshness", func(b *testing.B) { freshSummary = benchNexmarkFreshness(b, gen, sz) })
	summary.WriteString("\n" + pgSummary + ckptSummary + freshSummary)
	report.AddSection("Nexmark", summary.String())
	report.Notef("nexmark: load average (1, 5, 15 min) %s at the start of the Nexmark benchmark, %s at its end; the machine's 2 cores are shared, so rates move from run to run",
		loadStart, loadAvg())
}

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// summarizeRuns folds a query's rounds into one: the median duration, the
// largest peak RSS, the last run's rows and load; a failure in any round
// is the result.
func summarizeRuns(rs []nxRun) (nxRun, string) {
	var durs []float64
	out := rs[len(rs)-1]
	for _, r := range rs {
		if r.failure != "" {
			return r, r.failure
		}
		durs = append(durs, r.dur.Seconds())
		out.peakRSS = max(out.peakRSS, r.peakRSS)
	}
	out.dur = time.Duration(median(durs) * float64(time.Second))
	return out, ""
}

// copyTemplate copies the backlog's data directory for one run.
func copyTemplate(b *testing.B, template string) string {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "data")
	if out, err := exec.Command("cp", "-a", template, dir).CombinedOutput(); err != nil {
		b.Fatalf("copying the template data directory: %v\n%s", err, out)
	}
	return dir
}

// nxCatchUp starts a fresh server on a copy of the backlog, creates the
// query's view and times CREATE + FLUSH. A refused query, a run past the
// timeout or a server past the memory limit is reported in failure, not
// as a benchmark failure.
func nxCatchUp(b *testing.B, template string, q nxQuery, settings map[string]string, sz nxSizes) nxRun {
	s := startServer(b, copyTemplate(b, template), settings)
	defer s.Kill(b) // SIGKILL: a SIGTERM during a checkpoint is not what is measured
	conn := s.Conn(b)
	logStart := len(s.Logs())

	// A watchdog kills the server when it grows past the memory limit, so
	// that a query whose state explodes cannot take the machine down.
	var overMem atomic.Bool
	stopWatch := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		for {
			select {
			case <-stopWatch:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if cur, _ := rssMB(s.PID()); cur > sz.maxRSSMB {
				overMem.Store(true)
				if p, err := os.FindProcess(s.PID()); err == nil {
					p.Kill()
				}
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), sz.timeout)
	defer cancel()
	start := time.Now()
	_, err := conn.Exec(ctx, "CREATE MATERIALIZED VIEW "+q.name+" AS "+q.sql)
	if err == nil {
		_, err = conn.Exec(ctx, "FLUSH")
	}
	r := nxRun{dur: time.Since(start), load: LoadAvg1()}
	_, r.peakRSS = rssMB(s.PID())
	close(stopWatch)
	watch.Wait()
	switch {
	case overMem.Load():
		r.failure = fmt.Sprintf("aborted: server RSS over %.0f MiB after %.0f s", sz.maxRSSMB, r.dur.Seconds())
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		r.failure = fmt.Sprintf("timed out after %v", sz.timeout)
	case err != nil:
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			r.failure = fmt.Sprintf("not supported: %s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
		} else {
			r.failure = "failed: " + err.Error()
		}
	}
	if r.failure != "" {
		report.Notef("nexmark %s: %s", q.name, r.failure)
		return r
	}
	r.rows = queryInt(b, conn, "SELECT count(*) FROM "+q.name)
	// The backlog is in event order per stream: a late row would mean the
	// watermarks dropped input, and the result is not the query's.
	if late := queryInt(b, conn, "SELECT count(*) FROM streamdb_watermarks WHERE late_rows > 0"); late != 0 {
		b.Fatalf("%s: %d readers dropped late rows", q.name, late)
	}
	r.logs = s.Logs()[logStart:]
	return r
}

// benchNexmarkCeiling reads the given streams of the backlog from
// JetStream with one ordered consumer per stream, all at once, without
// decoding, and returns the rate over the events read: the most a query
// reading those streams could consume.
func benchNexmarkCeiling(b *testing.B, template string, sz nxSizes, counts [3]uint64, kinds []nexmark.Kind, what string) float64 {
	s := startServer(b, copyTemplate(b, template), map[string]string{"execution.checkpointing.interval": "0"})
	defer s.Kill(b)
	nc, js := natsJS(b, s.NATSURL())
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), sz.timeout)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(kinds))
	var bytes atomic.Int64
	var events uint64
	start := time.Now()
	for i, k := range kinds {
		events += counts[k]
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = readOrdered(ctx, js, nexmark.DefaultSubjects[k], counts[k], &bytes)
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		b.Fatalf("reading the backlog: %v", err)
	}
	report.Add(nxBench, "ceiling", "JetStream ordered consumers, no decoding ("+what+")", float64(events)/d.Seconds(), "events/s")
	report.Add(nxBench, "ceiling", "bytes read ("+what+")", float64(bytes.Load())/d.Seconds()/(1<<20), "MiB/s")
	return float64(events) / d.Seconds()
}

// benchNexmarkPostgres loads the backlog's bids into PostgreSQL in COPY
// batches while a statement-level trigger (with a transition table)
// maintains the GROUP BY auction result, then times REFRESH MATERIALIZED
// VIEW of the same GROUP BY over all bids.
func benchNexmarkPostgres(b *testing.B, gen *nexmark.Generator, sz nxSizes, counts [3]uint64, streamdbRate float64) string {
	pg := testutil.StartPostgres(b)
	conn := pg.Conn(b)
	ctx := context.Background()
	for _, sql := range []string{
		"SET synchronous_commit = off",
		`CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel TEXT, url TEXT, date_time TIMESTAMP, extra TEXT)`,
		`CREATE TABLE bid_agg (auction BIGINT PRIMARY KEY, n BIGINT NOT NULL, m BIGINT)`,
		`CREATE FUNCTION bid_agg_maintain() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN
		   INSERT INTO bid_agg AS a SELECT auction, count(*), max(price) FROM new_rows GROUP BY auction
		   ON CONFLICT (auction) DO UPDATE SET n = a.n + excluded.n, m = greatest(a.m, excluded.m);
		   RETURN NULL;
		 END $$`,
		`CREATE TRIGGER bid_agg_trg AFTER INSERT ON bid REFERENCING NEW TABLE AS new_rows
		 FOR EACH STATEMENT EXECUTE FUNCTION bid_agg_maintain()`,
		`CREATE MATERIALIZED VIEW bid_mv AS ` + nxGroupBy + ` WITH NO DATA`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			b.Fatalf("postgres: %s: %v", sql, err)
		}
	}
	// The rows are rendered before the clock starts.
	rows := make([][]any, 0, counts[nexmark.KindBid])
	for n := uint64(0); n < sz.events; n++ {
		if nexmark.KindOf(n) == nexmark.KindBid {
			e := gen.Event(n).Bid
			rows = append(rows, []any{e.Auction, e.Bidder, e.Price, e.Channel, e.URL, e.DateTime, e.Extra})
		}
	}
	cols := []string{"auction", "bidder", "price", "channel", "url", "date_time", "extra"}
	start := time.Now()
	for i := 0; i < len(rows); i += sz.pgBatchRows {
		batch := rows[i:min(i+sz.pgBatchRows, len(rows))]
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"bid"}, cols, pgx.CopyFromRows(batch)); err != nil {
			b.Fatalf("postgres COPY: %v", err)
		}
	}
	load := time.Since(start)
	trigRate := float64(len(rows)) / load.Seconds()
	refresh := execTimed(b, conn, "REFRESH MATERIALIZED VIEW bid_mv")
	if got := queryInt(b, conn, "SELECT sum(n) FROM bid_agg"); got != int64(len(rows)) {
		report.Notef("nexmark postgres: bid_agg counts %d bids, want %d", got, len(rows))
	}
	cas := "PostgreSQL GROUP BY auction"
	report.Add(nxBench, cas, fmt.Sprintf("COPY in batches of %d rows + statement-level trigger maintaining count, max", sz.pgBatchRows), trigRate, "bids/s")
	report.Add(nxBench, cas, "REFRESH MATERIALIZED VIEW (all bids)", refresh.Seconds(), "s")
	report.Add(nxBench, cas, "REFRESH MATERIALIZED VIEW as a rate", float64(len(rows))/refresh.Seconds(), "bids/s")
	var out strings.Builder
	fmt.Fprintf(&out, "PostgreSQL 15 maintaining `%s` over the same %d bids (synchronous_commit off, fsync off):\n\n", nxGroupBy, len(rows))
	out.WriteString("| system | how | bids/s |\n|---|---|---:|\n")
	if streamdbRate > 0 {
		fmt.Fprintf(&out, "| streamdb | materialized view, catch-up (view groupby above) | %.0f |\n", streamdbRate)
		report.Add(nxBench, cas, "streamdb rate / PostgreSQL trigger rate", streamdbRate/trigRate, "ratio")
	}
	fmt.Fprintf(&out, "| PostgreSQL | COPY batches of %d + statement-level trigger (transition table, upsert) | %.0f |\n", sz.pgBatchRows, trigRate)
	fmt.Fprintf(&out, "| PostgreSQL | REFRESH MATERIALIZED VIEW after loading: %.2f s | %.0f |\n\n", refresh.Seconds(), float64(len(rows))/refresh.Seconds())
	return out.String()
}

// benchNexmarkCheckpoints runs the GROUP BY view's catch-up with periodic
// checkpoints off and every 1s, interleaved (off, 1s, 1s, off) so that
// drift on a busy machine falls on both alike.
func benchNexmarkCheckpoints(b *testing.B, template string, sz nxSizes, counts [3]uint64) string {
	q := nxQueries[len(nxQueries)-1] // groupby
	rates := map[string][]float64{}
	var pauseMax, durMax time.Duration
	var ckpts int
	for i, iv := range []string{"0", "1s", "1s", "0"} {
		r := nxCatchUp(b, template, q, map[string]string{"execution.checkpointing.interval": iv}, sz)
		if r.failure != "" {
			return ""
		}
		rates[iv] = append(rates[iv], float64(counts[nexmark.KindBid])/r.dur.Seconds())
		if iv != "0" {
			for _, c := range checkpointsInLog(r.logs) {
				ckpts++
				pauseMax = max(pauseMax, c.pause)
				durMax = max(durMax, c.duration)
			}
		}
		report.Add(nxBench, "checkpoints "+map[string]string{"0": "off", "1s": "every 1s"}[iv], fmt.Sprintf("run %d: groupby catch-up", i+1), rates[iv][len(rates[iv])-1], "bids/s")
	}
	off, on := Summarize(rates["0"]), Summarize(rates["1s"])
	cas := "checkpoints 1s vs off"
	report.Add(nxBench, cas, "mean rate with checkpoints every 1s / off", on.Mean/off.Mean, "ratio")
	report.Add(nxBench, cas, "checkpoints completed in the 1s runs", float64(ckpts), "count")
	report.Add(nxBench, cas, "longest processing stall (checkpoint pause) in the 1s runs", float64(pauseMax.Nanoseconds())/1000, "µs")
	report.Add(nxBench, cas, "longest checkpoint (async part included)", ms(durMax), "ms")
	return fmt.Sprintf("Checkpoints during the groupby catch-up (runs off, 1s, 1s, off): mean %.0f bids/s off, %.0f bids/s every 1s, ratio %.2f; "+
		"%d checkpoints in the 1s runs, longest processing stall (the checkpoint's synchronous pause) %.1f µs, longest checkpoint %.0f ms (written asynchronously).\n\n",
		off.Mean, on.Mean, on.Mean/off.Mean, ckpts, float64(pauseMax.Nanoseconds())/1000, ms(durMax))
}

// benchNexmarkFreshness publishes Nexmark events at a steady rate into a
// fresh server maintaining the GROUP BY view while a prober publishes
// marker bids (auction -1, price = the marker's number) and polls the
// view's row for auction -1 (a point read by the view's key) until each
// shows. The view measured is the only reader of the bid stream.
func benchNexmarkFreshness(b *testing.B, gen *nexmark.Generator, sz nxSizes) string {
	s := startServer(b, "", nil)
	defer s.Kill(b)
	conn := s.Conn(b)
	for _, ddl := range nxStreams {
		execTimed(b, conn, ddl)
	}
	execTimed(b, conn, "CREATE MATERIALIZED VIEW groupby AS "+nxGroupBy)
	events := uint64(float64(sz.steadyRate) * sz.steadyTime.Seconds())
	type result struct {
		st  nexmark.PublishStats
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		st, err := nexmark.Publish(context.Background(), s.NATSURL(), gen, nexmark.PublishOptions{Events: events, Rate: sz.steadyRate, NoAck: true})
		done <- result{st, err}
	}()
	// Markers carry no event time: the generator's event time is not the
	// wall clock, and a marker stamped now would move the bid stream's
	// watermark past every generated bid, which would then be late.
	marker := func(i int64) []byte {
		return fmt.Appendf(nil, `{"auction":-1,"bidder":-1,"price":%d,"channel":"probe","url":"","date_time":null,"extra":""}`, i)
	}
	probe := startProberWith(b, s, "nexmark.bid", "SELECT m FROM groupby WHERE auction = -1", marker)
	res := <-done
	end := time.Now()
	execTimed(b, conn, "FLUSH")
	samples := probe.stop(b)
	if res.err != nil {
		b.Fatalf("steady publisher: %v", res.err)
	}
	achieved := float64(events) / res.st.Elapsed.Seconds()
	// The publisher sent without acknowledgements: the view itself shows
	// that every bid arrived, once.
	var counted int64
	if err := conn.QueryRow(b.Context(), "SELECT coalesce(sum(n), 0) FROM groupby WHERE auction <> -1").Scan(&counted); err != nil {
		b.Fatal(err)
	}
	if uint64(counted) != res.st.Events[nexmark.KindBid] {
		b.Fatalf("freshness: groupby counted %d bids, %d were published", counted, res.st.Events[nexmark.KindBid])
	}
	// Skip the first 2 s: connections and first epochs warm up.
	lat := Summarize(latencies(samples, start.Add(2*time.Second), end))
	_, peak := rssMB(s.PID())
	// Markers whose wait overlapped a periodic checkpoint (each counted
	// once): the stall users see.
	var during []float64
	windows := checkpointWindows(s.Logs())
	for _, sm := range samples {
		if sm.at.Before(start.Add(2*time.Second)) || sm.at.After(end) {
			continue
		}
		for _, w := range windows {
			if sm.at.Before(w[1]) && sm.at.Add(sm.lat).After(w[0]) {
				during = append(during, ms(sm.lat))
				break
			}
		}
	}
	cas := fmt.Sprintf("freshness at %d events/s", sz.steadyRate)
	if len(during) > 0 {
		d := Summarize(during)
		report.Add(nxBench, cas, "publish to visible for markers overlapping a checkpoint, max", d.Max, "ms")
		report.Add(nxBench, cas, "markers overlapping a checkpoint", float64(d.N), "count")
	}
	report.Add(nxBench, cas, "publish rate achieved", achieved, "events/s")
	if lat.N > 0 { // NaN does not go into JSON
		report.Add(nxBench, cas, "publish to visible in SELECT, p50", lat.P50, "ms")
		report.Add(nxBench, cas, "publish to visible in SELECT, p99", lat.P99, "ms")
		report.Add(nxBench, cas, "publish to visible in SELECT, max", lat.Max, "ms")
	} else {
		report.Notef("nexmark freshness: no marker became visible during the steady load")
	}
	report.Add(nxBench, cas, "samples", float64(lat.N), "count")
	report.Add(nxBench, cas, "server peak RSS", peak, "MiB")
	if lat.N > 0 && lat.P50 > 1000 {
		report.Notef("nexmark freshness: the server did not keep up with %d events/s (median publish-to-visible %.1f s, %d markers): the figures measure a growing backlog, not steady freshness", sz.steadyRate, lat.P50/1000, lat.N)
	}
	if report.Mode == "quick" && sz.steadyRate < 50_000 {
		report.Notef("nexmark freshness: quick mode publishes %d events/s, not the 50k/s of full mode", sz.steadyRate)
	}
	p := func(v float64) string {
		if math.IsNaN(v) {
			return "n/a"
		}
		return fmt.Sprintf("%.1f", v)
	}
	dmax := math.NaN()
	if len(during) > 0 {
		dmax = Summarize(during).Max
	}
	return fmt.Sprintf("Freshness: %d events/s for %v (achieved %.0f/s) into view groupby, checkpoints every 1s: publish to visible in a SELECT p50 %s ms, p99 %s ms, max %s ms over %d markers; max %s ms over the %d markers that overlapped a checkpoint.\n",
		sz.steadyRate, sz.steadyTime, achieved, p(lat.P50), p(lat.P99), p(lat.Max), lat.N, p(dmax), len(during))
}

var ckptTimeRE = regexp.MustCompile(`time=(\S+) level=\S+ msg="checkpoint completed" .*?duration=(\S+)`)

// checkpointWindows returns [start, end] of every completed checkpoint in a
// server log (end is the log line's time, start end minus its duration).
func checkpointWindows(logs string) [][2]time.Time {
	var out [][2]time.Time
	for _, m := range ckptTimeRE.FindAllStringSubmatch(logs, -1) {
		end, err1 := time.Parse(time.RFC3339Nano, m[1])
		d, err2 := time.ParseDuration(m[2])
		if err1 == nil && err2 == nil {
			out = append(out, [2]time.Time{end.Add(-d), end})
		}
	}
	return out
}
