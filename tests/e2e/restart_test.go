package e2e

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// snapshot is everything a user can see of the catalog and the views.
type snapshot struct {
	streams []string
	views   []string
	rows    map[string][]string
}

func takeSnapshot(t *testing.T, conn *pgx.Conn, views ...string) snapshot {
	t.Helper()
	s := snapshot{rows: map[string][]string{}}
	s.streams = textRows(t, conn, "SHOW STREAMS")
	sort.Strings(s.streams)
	s.views = namedColumns(t, conn, "SHOW MATERIALIZED VIEWS", "name", "definition")
	for _, v := range views {
		s.rows[v] = textRows(t, conn, "SELECT * FROM "+v+" ORDER BY 1")
	}
	return s
}

// namedColumns returns the given columns of a query's rows, by name, so
// that columns added later do not matter.
func namedColumns(t *testing.T, conn *pgx.Conn, sql string, cols ...string) []string {
	t.Helper()
	rows, err := conn.Query(testutil.Context(t, 30*time.Second), sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	idx := map[string]int{}
	for i, fd := range rows.FieldDescriptions() {
		idx[fd.Name] = i
	}
	for _, c := range cols {
		if _, ok := idx[c]; !ok {
			t.Fatalf("%s has no column %q", sql, c)
		}
	}
	var out []string
	for rows.Next() {
		vals := rows.RawValues()
		line := ""
		for i, c := range cols {
			if i > 0 {
				line += " | "
			}
			line += string(vals[idx[c]])
		}
		out = append(out, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func compareSnapshots(t *testing.T, when string, got, want snapshot) {
	t.Helper()
	if !slices.Equal(got.streams, want.streams) {
		t.Errorf("%s: SHOW STREAMS\n got %q\nwant %q", when, got.streams, want.streams)
	}
	if !slices.Equal(got.views, want.views) {
		t.Errorf("%s: SHOW MATERIALIZED VIEWS\n got %q\nwant %q", when, got.views, want.views)
	}
	for v, rows := range want.rows {
		if !slices.Equal(got.rows[v], rows) {
			t.Errorf("%s: view %s\n got %q\nwant %q", when, v, got.rows[v], rows)
		}
	}
}

// TestRestart creates streams and views, fills them, stops the server with
// SIGTERM and starts it again: every stream and view must be back with the
// same contents, and then keep up with new input, each event counted
// exactly once, over several restarts, including events that were published
// but not yet flushed when the server stopped.
func TestRestart(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE STREAM orders (id BIGINT, customer VARCHAR, cents INT, at TIMESTAMP) WITH (subject = 'rs.orders', format = 'json')",
		"CREATE STREAM clicks (user_id BIGINT, page TEXT) WITH (subject = 'rs.clicks', format = 'json')",
		"CREATE STREAM unused (x INT) WITH (subject = 'rs.unused')",
		"CREATE MATERIALIZED VIEW per_customer AS SELECT customer, count(*) AS n, sum(cents) AS cents, avg(cents) AS avg_cents FROM orders GROUP BY customer",
		"CREATE MATERIALIZED VIEW order_stats AS SELECT count(*) AS n, count(DISTINCT id) AS ids, min(at) AS first, max(at) AS last FROM orders",
		"CREATE MATERIALIZED VIEW big_orders AS SELECT id, cents FROM orders WHERE cents >= 900",
		"CREATE MATERIALIZED VIEW per_page AS SELECT page, count(*) AS n FROM clicks GROUP BY page")
	views := []string{"per_customer", "order_stats", "big_orders", "per_page"}

	_, js := testutil.JetStream(t, srv.NATSURL())
	m := &orderModel{}
	publishOrders := func(n int) {
		t.Helper()
		var msgs []string
		for range n {
			id := m.add(fmt.Sprintf("c%d", len(m.cents)%5), len(m.cents)%1000)
			msgs = append(msgs, fmt.Sprintf(`{"id": %d, "customer": "%s", "cents": %d, "at": "2026-11-29 10:%02d:%02d"}`,
				id, m.customers[id], m.cents[id], (id/60)%60, id%60))
		}
		testutil.Publish(t, js, "rs.orders", msgs...)
	}
	insertOrder := func() {
		t.Helper()
		id := m.add("sql", 999)
		exec(t, conn, fmt.Sprintf("INSERT INTO orders VALUES (%d, 'sql', 999, '2026-11-30 00:00:00')", id))
	}
	publishOrders(300)
	exec(t, conn, "INSERT INTO clicks VALUES (1, '/'), (2, '/'), (1, '/about')")
	flush(t, conn)
	before := takeSnapshot(t, conn, views...)
	m.check(t, conn)

	srv.Stop(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	// Back as they were, before any new input and before any FLUSH.
	compareSnapshots(t, "after restart", takeSnapshot(t, conn, views...), before)
	flush(t, conn)
	compareSnapshots(t, "after restart and FLUSH", takeSnapshot(t, conn, views...), before)

	// New input after the restart.
	publishOrders(200)
	insertOrder()
	exec(t, conn, "INSERT INTO clicks VALUES (3, '/about')")
	flush(t, conn)
	m.check(t, conn)
	wantRows(t, conn, "SELECT * FROM per_page ORDER BY page", "/ 2", "/about 2")

	// Input published but not flushed when the server stops is read after
	// the restart, once.
	for cycle := range 3 {
		publishOrders(250)
		insertOrder()
		srv.Restart(t)
		conn = srv.Conn(t)
		flush(t, conn)
		t.Logf("restart cycle %d: %d orders", cycle, len(m.cents))
		m.check(t, conn)
	}
	// A view created after the restarts is backfilled with all the input.
	exec(t, conn, "CREATE MATERIALIZED VIEW late AS SELECT count(*) AS n, count(DISTINCT id) AS ids FROM orders")
	wantRows(t, conn, "SELECT * FROM late", fmt.Sprintf("%d %d", len(m.cents), len(m.cents)))
	wantRows(t, conn, "SELECT * FROM per_page ORDER BY page", "/ 2", "/about 2")
	if got := showStream(t, conn, "unused")["subject"]; got != "rs.unused" {
		t.Errorf("stream unused: subject %q", got)
	}
	// Dropped objects stay dropped across a restart.
	exec(t, conn, "DROP MATERIALIZED VIEW big_orders", "DROP STREAM unused")
	srv.Restart(t)
	conn = srv.Conn(t)
	_, err := conn.Exec(testutil.Context(t, 30*time.Second), "SELECT * FROM big_orders")
	wantCode(t, err, "42P01")
	got := namedColumns(t, conn, "SHOW STREAMS", "name")
	if !slices.Equal(got, []string{"clicks", "orders"}) {
		t.Errorf("streams after drop and restart: %q", got)
	}
	wantRows(t, conn, "SELECT n, ids FROM order_stats", fmt.Sprintf("%d %d", len(m.cents), len(m.cents)))
}

// orderModel is what the order views must hold: order id i has customer
// customers[i] and cents[i].
type orderModel struct {
	customers []string
	cents     []int
}

func (m *orderModel) add(customer string, cents int) int {
	m.customers = append(m.customers, customer)
	m.cents = append(m.cents, cents)
	return len(m.cents) - 1
}

// check compares the order views with the model: each order counted once.
func (m *orderModel) check(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	n := len(m.cents)
	wantRows(t, conn, "SELECT n, ids FROM order_stats", fmt.Sprintf("%d %d", n, n))
	count := map[string]int{}
	sum := map[string]int{}
	big := 0
	for i, c := range m.customers {
		count[c]++
		sum[c] += m.cents[i]
		if m.cents[i] >= 900 {
			big++
		}
	}
	var names []string
	for c := range count {
		names = append(names, c)
	}
	sort.Strings(names)
	var want []string
	for _, c := range names {
		want = append(want, fmt.Sprintf("%s %d %d", c, count[c], sum[c]))
	}
	wantRows(t, conn, "SELECT customer, n, cents FROM per_customer ORDER BY customer", want...)
	wantRows(t, conn, "SELECT count(*), count(DISTINCT id) FROM big_orders", fmt.Sprintf("%d %d", big, big))
}
