package recovery

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// The workload: two streams, orders and refunds, and views covering GROUP
// BY with count/sum/min/max/avg, a filter and projection, UNION ALL of both
// streams, count(DISTINCT), a global aggregate and a subquery in FROM. Every
// view's query is also valid PostgreSQL over tables of the same names, which
// gives the expected answer.

const (
	ordersSubject  = "shop.orders"
	refundsSubject = "shop.refunds"
)

var workloadDDL = []string{
	`CREATE STREAM orders (order_id BIGINT, customer_id BIGINT, product VARCHAR, qty BIGINT,
	   price_cents BIGINT, region VARCHAR) WITH (subject = '` + ordersSubject + `', format = 'json')`,
	`CREATE STREAM refunds (refund_id BIGINT, customer_id BIGINT, region VARCHAR, amount BIGINT)
	   WITH (subject = '` + refundsSubject + `', format = 'json')`,
}

var pgDDL = []string{
	`CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, product TEXT, qty BIGINT, price_cents BIGINT, region TEXT)`,
	`CREATE TABLE refunds (refund_id BIGINT, customer_id BIGINT, region TEXT, amount BIGINT)`,
}

// viewDef is a materialized view and the columns compared with tolerance.
type viewDef struct {
	name, query string
	floatCols   []string
}

var workloadViews = []viewDef{
	{name: "cust_stats", query: `SELECT customer_id, count(*) AS n, sum(qty) AS qty_sum, min(price_cents) AS min_price,
	   max(price_cents) AS max_price, avg(price_cents) AS avg_price FROM orders GROUP BY customer_id`,
		floatCols: []string{"avg_price"}},
	{name: "big_orders", query: `SELECT order_id, customer_id, product, qty * price_cents AS amount
	   FROM orders WHERE qty >= 8 AND price_cents > 700`},
	{name: "region_flow", query: `SELECT region, count(*) AS n, sum(amount) AS total FROM
	   (SELECT region, qty AS amount FROM orders UNION ALL SELECT region, amount FROM refunds) AS u GROUP BY region`},
	{name: "product_reach", query: `SELECT product, count(DISTINCT customer_id) AS customers, count(*) AS n
	   FROM orders GROUP BY product`},
	{name: "totals", query: `SELECT count(*) AS n, sum(price_cents) AS revenue, count(price_cents) AS priced,
	   avg(qty) AS avg_qty FROM orders`, floatCols: []string{"avg_qty"}},
	{name: "refund_buckets", query: `SELECT bucket, count(*) AS n, sum(amount) AS total FROM
	   (SELECT customer_id % 7 AS bucket, amount FROM refunds WHERE amount > 100) AS r GROUP BY bucket`},
	// Reads orders twice through one shared reader.
	{name: "cust_top_orders", query: `SELECT o.customer_id, o.order_id, o.price_cents FROM orders o
	   JOIN (SELECT customer_id, max(price_cents) AS mx FROM orders GROUP BY customer_id) m
	   ON o.customer_id = m.customer_id AND o.price_cents = m.mx`},
	// Top products per region: the two counts (grouped in two orders) are
	// one shared aggregate.
	{name: "region_top_products", query: `SELECT c.region, c.product, c.n FROM
	   (SELECT region, product, count(*) AS n FROM orders GROUP BY region, product) c
	   JOIN (SELECT region, max(n) AS mx FROM
	     (SELECT product, region, count(*) AS n FROM orders GROUP BY product, region) x GROUP BY region) m
	   ON c.region = m.region AND c.n = m.mx`},
}

// createWorkload creates the streams and views in streamdb.
func createWorkload(t testing.TB, conn *pgx.Conn) {
	t.Helper()
	testutil.MustExec(t, conn, workloadDDL...)
	for _, v := range workloadViews {
		testutil.MustExec(t, conn, "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query)
	}
}

// event is one generated message: an order (refund false) or a refund.
type event struct {
	refund   bool
	id       int64
	customer int64
	product  string
	region   string
	qty      *int64 // orders; nil is NULL
	price    *int64 // orders; nil is NULL
	amount   int64  // refunds
}

func (e event) subject() string {
	if e.refund {
		return refundsSubject
	}
	return ordersSubject
}

func (e event) json() []byte {
	var m map[string]any
	if e.refund {
		m = map[string]any{"refund_id": e.id, "customer_id": e.customer, "region": e.region, "amount": e.amount}
	} else {
		m = map[string]any{"order_id": e.id, "customer_id": e.customer, "product": e.product, "region": e.region,
			"qty": e.qty, "price_cents": e.price}
	}
	b, _ := json.Marshal(m)
	return b
}

var (
	products = []string{"apple", "pear", "fig", "kiwi", "plum", "lime", "date", "yuzu", "sloe", "quince", "cherry", "melon"}
	regions  = []string{"eu", "us", "ap", "sa", "af"}
)

// generator produces the deterministic event sequence of a seed.
type generator struct {
	rng           *rand.Rand
	orders, refnd int64
}

func newGenerator(seed uint64) *generator {
	return &generator{rng: rand.New(rand.NewPCG(seed, 0x5eed))}
}

func (g *generator) next() event {
	r := g.rng
	if r.IntN(4) == 0 {
		g.refnd++
		return event{refund: true, id: g.refnd, customer: r.Int64N(300), region: regions[r.IntN(len(regions))],
			amount: r.Int64N(400) - 50}
	}
	g.orders++
	e := event{id: g.orders, customer: r.Int64N(300), product: products[r.IntN(len(products))],
		region: regions[r.IntN(len(regions))]}
	if r.IntN(50) != 0 {
		q := r.Int64N(12) - 1
		e.qty = &q
	}
	if r.IntN(40) != 0 {
		p := r.Int64N(1000) + 1
		e.price = &p
	}
	return e
}

// producer publishes generated events at a steady rate with acknowledged
// JetStream publishes (each with a message id, so a retried publish is
// never stored twice) and records every acknowledged event.
type producer struct {
	js   jetstream.JetStream
	gen  *generator
	rate int // events per second
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	acked []event
	err   error
}

func startProducer(js jetstream.JetStream, gen *generator, rate int) *producer {
	p := &producer{js: js, gen: gen, rate: rate, stop: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

func (p *producer) run() {
	defer close(p.done)
	const tick = 10 * time.Millisecond
	perTick := max(1, p.rate/int(time.Second/tick))
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-ticker.C:
		}
		batch := make([]event, perTick)
		futures := make([]jetstream.PubAckFuture, perTick)
		for i := range batch {
			batch[i] = p.gen.next()
			f, err := p.js.PublishAsync(batch[i].subject(), batch[i].json(), jetstream.WithMsgID(msgID(batch[i])))
			if err != nil {
				f = nil
			}
			futures[i] = f
		}
		for i, f := range futures {
			if err := p.await(f, batch[i]); err != nil {
				p.mu.Lock()
				p.err = err
				p.mu.Unlock()
				return
			}
		}
		p.mu.Lock()
		p.acked = append(p.acked, batch...)
		p.mu.Unlock()
	}
}

func msgID(e event) string {
	if e.refund {
		return "r" + strconv.FormatInt(e.id, 10)
	}
	return "o" + strconv.FormatInt(e.id, 10)
}

// await waits for an asynchronous publish's ack, retrying synchronously
// (same message id) when it failed.
func (p *producer) await(f jetstream.PubAckFuture, e event) error {
	if f != nil {
		select {
		case <-f.Ok():
			return nil
		case <-f.Err():
		case <-time.After(10 * time.Second):
		}
	}
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := p.js.Publish(ctx, e.subject(), e.json(), jetstream.WithMsgID(msgID(e)))
		cancel()
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(100 * time.Millisecond) // pause between publish retries
	}
	return fmt.Errorf("publishing %s %s: %w", e.subject(), msgID(e), last)
}

// count returns how many events are acknowledged so far.
func (p *producer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// finish stops the producer and returns every acknowledged event.
func (p *producer) finish(t testing.TB) []event {
	t.Helper()
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		t.Fatalf("producer: %v", p.err)
	}
	return p.acked
}

// checkStored checks that JetStream holds exactly the acknowledged events
// on each subject (no lost or duplicated input, so any difference in the
// views is streamdb's).
func checkStored(t testing.TB, js jetstream.JetStream, events []event) {
	t.Helper()
	want := map[string]uint64{}
	for _, e := range events {
		want[e.subject()]++
	}
	ctx := testutil.Context(t, 30*time.Second)
	for subj, n := range want {
		name, err := js.StreamNameBySubject(ctx, subj)
		if err != nil {
			t.Fatalf("stream of %s: %v", subj, err)
		}
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != n {
			t.Fatalf("JetStream stream %s holds %d messages, the producer had %d acknowledged", name, info.State.Msgs, n)
		}
	}
}

// loadPostgres creates the tables in PostgreSQL and copies events in.
func loadPostgres(t testing.TB, pg *pgx.Conn, events []event) {
	t.Helper()
	ctx := testutil.Context(t, 2*time.Minute)
	for _, sql := range pgDDL {
		if _, err := pg.Exec(ctx, sql); err != nil {
			t.Fatalf("postgres: %s: %v", sql, err)
		}
	}
	var orders, refunds [][]any
	for _, e := range events {
		if e.refund {
			refunds = append(refunds, []any{e.id, e.customer, e.region, e.amount})
		} else {
			orders = append(orders, []any{e.id, e.customer, e.product, e.qty, e.price, e.region})
		}
	}
	if _, err := pg.CopyFrom(ctx, pgx.Identifier{"orders"},
		[]string{"order_id", "customer_id", "product", "qty", "price_cents", "region"}, pgx.CopyFromRows(orders)); err != nil {
		t.Fatalf("postgres COPY orders: %v", err)
	}
	if _, err := pg.CopyFrom(ctx, pgx.Identifier{"refunds"},
		[]string{"refund_id", "customer_id", "region", "amount"}, pgx.CopyFromRows(refunds)); err != nil {
		t.Fatalf("postgres COPY refunds: %v", err)
	}
}

// compareViews checks every view in streamdb against its query run by
// PostgreSQL, as multisets of rows; it returns whether all matched.
func compareViews(t testing.TB, sdb, pg *pgx.Conn, views []viewDef) bool {
	t.Helper()
	ok := true
	for _, v := range views {
		wantCols, want := mustQuery(t, pg, v.query)
		gotCols, got, err := queryText(sdb, time.Minute, "SELECT * FROM "+v.name)
		if err != nil {
			t.Errorf("view %s: %v", v.name, err)
			ok = false
			continue
		}
		if strings.Join(wantCols, ",") != strings.Join(gotCols, ",") {
			t.Errorf("view %s: columns %v, PostgreSQL %v", v.name, gotCols, wantCols)
			ok = false
			continue
		}
		if diff := diffRows(wantCols, want, got, v.floatCols); diff != "" {
			t.Errorf("view %s differs from PostgreSQL (%d rows there, %d in streamdb):\n%s", v.name, len(want), len(got), diff)
			ok = false
		} else {
			t.Logf("view %s: %d rows, equal to PostgreSQL", v.name, len(got))
		}
	}
	return ok
}

// diffRows compares two multisets of text rows, columns named in floatCols
// with a relative tolerance; it describes the differences, "" when equal.
func diffRows(cols []string, want, got [][]string, floatCols []string) string {
	isFloat := make([]bool, len(cols))
	for i, c := range cols {
		for _, f := range floatCols {
			isFloat[i] = isFloat[i] || c == f
		}
	}
	key := func(r []string) string {
		parts := make([]string, len(r))
		for i, v := range r {
			if isFloat[i] && v != nullText {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					v = strconv.FormatFloat(f, 'g', 9, 64)
				}
			}
			parts[i] = strconv.Quote(v)
		}
		return strings.Join(parts, ",")
	}
	counts := map[string]int{}
	for _, r := range want {
		counts[key(r)]++
	}
	for _, r := range got {
		counts[key(r)]--
	}
	var missing, extra []string
	for k, n := range counts {
		for ; n > 0; n-- {
			missing = append(missing, k)
		}
		for ; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	show := func(rows []string) string {
		if len(rows) > 8 {
			return strings.Join(rows[:8], "\n    ") + fmt.Sprintf("\n    ... %d more", len(rows)-8)
		}
		return strings.Join(rows, "\n    ")
	}
	return fmt.Sprintf("  columns %v\n  only in PostgreSQL (%d):\n    %s\n  only in streamdb (%d):\n    %s",
		cols, len(missing), show(missing), len(extra), show(extra))
}

// chaosOpts configures runChaos.
type chaosOpts struct {
	config []string // settings, key=value
	kills  int
	// startupKills of the restarts (spread evenly) are preceded by an
	// extra start that is killed midway, typically while it restores.
	startupKills int
	minDelay     time.Duration // between a (re)start and the next kill
	maxDelay     time.Duration
	rate         int // events per second
}

// runChaos runs the workload against a server with a standalone NATS while
// a producer publishes and the server is killed (SIGKILL) opts.kills times
// at random moments and restarted; each restart must recover from a
// checkpoint. Then it stops the producer, runs FLUSH and compares every
// view with PostgreSQL over exactly the acknowledged events. It returns the
// server, stopped or running.
func runChaos(t *testing.T, opts chaosOpts) *testutil.Server {
	t.Helper()
	seed := seedFor(t)
	rng := rand.New(rand.NewPCG(seed, 0x6b111))
	natsURL := testutil.StartNATS(t)
	pg := testutil.StartPostgres(t)
	cfg := writeConfig(t, opts.config...)
	srv := startServer(t, testutil.ServerOptions{NATSURL: natsURL, ConfigFile: cfg})
	conn := srv.Conn(t)
	createWorkload(t, conn)

	_, js := testutil.JetStream(t, natsURL)
	prod := startProducer(js, newGenerator(seed), opts.rate)
	defer func() {
		select {
		case <-prod.done:
		default:
			close(prod.stop)
			<-prod.done
		}
	}()
	start := time.Now()
	var recovered []string
	for i := 1; i <= opts.kills; i++ {
		delay := opts.minDelay + time.Duration(rng.Int64N(int64(opts.maxDelay-opts.minDelay)+1))
		time.Sleep(delay) // the kill moment, chosen by the seed
		if !srv.Running() {
			t.Fatalf("kill %d: streamdb died on its own before it was killed", i)
		}
		srv.Kill(t)
		published := prod.count()
		if every := opts.kills / max(1, opts.startupKills); opts.startupKills > 0 && i%every == 0 && i/every <= opts.startupKills {
			killDuringStart(t, srv, natsURL, cfg, time.Duration(rng.Int64N(int64(400*time.Millisecond))))
		}
		srv.Restart(t)
		log := runLog(srv)
		lines := logLines(log, "recovering from checkpoint")
		if len(lines) == 0 {
			t.Fatalf("restart %d after kill -9 (%d events published so far) did not log \"recovering from checkpoint\"; its log:\n%s", i, published, log)
		}
		recovered = append(recovered, fmt.Sprintf("%s@epoch%s", strings.TrimPrefix(filepath.Base(logField(lines[0], "dir")), "chk-"), logField(lines[0], "epoch")))
	}
	t.Logf("%d kills in %v; recovered from checkpoints %v", opts.kills, time.Since(start).Round(time.Millisecond), recovered)

	events := prod.finish(t)
	checkStored(t, js, events)
	conn = srv.Conn(t)
	flushStart := time.Now()
	testutil.MustExec(t, conn, "FLUSH")
	t.Logf("%d events published at ~%d/s; FLUSH took %v", len(events), opts.rate, time.Since(flushStart).Round(time.Millisecond))
	for _, m := range queryMaps(t, conn, "SHOW MATERIALIZED VIEWS") {
		if m["status"] != "running" {
			t.Errorf("view %s has status %q after recovery", m["name"], m["status"])
		}
	}
	pgConn := pg.Conn(t)
	loadPostgres(t, pgConn, events)
	compareViews(t, conn, pgConn, workloadViews)
	return srv
}

// publishEvents publishes events and waits for every acknowledgement.
func publishEvents(t testing.TB, js jetstream.JetStream, events []event) {
	t.Helper()
	p := &producer{js: js}
	for start := 0; start < len(events); start += 1000 {
		batch := events[start:min(len(events), start+1000)]
		futures := make([]jetstream.PubAckFuture, len(batch))
		for i, e := range batch {
			f, err := js.PublishAsync(e.subject(), e.json(), jetstream.WithMsgID(msgID(e)))
			if err == nil {
				futures[i] = f
			}
		}
		for i, f := range futures {
			if err := p.await(f, batch[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// generate returns the next n events of g.
func (g *generator) generate(n int) []event {
	out := make([]event, n)
	for i := range out {
		out[i] = g.next()
	}
	return out
}

// killDuringStart starts the server's binary on its data directory and
// kills it after delay, typically while it restores a checkpoint.
func killDuringStart(t *testing.T, srv *testutil.Server, natsURL, cfg string, delay time.Duration) {
	t.Helper()
	f, err := os.OpenFile(srv.LogPath, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	args := []string{"--listen", srv.Addr, "--http-listen", "", "--data-dir", srv.DataDir, "--nats-url", natsURL, "--config", cfg}
	fmt.Fprintf(f, "=== recovery test: start to be killed after %v: %s\n", delay, strings.Join(args, " "))
	cmd := exec.Command(testutil.BuildServer(t), args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(delay) // the kill moment during start, chosen by the caller's seed
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}
