package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// Views over views and over tables read the changes of the pipeline below
// them (an edge), and a view created while the server runs starts from a
// snapshot of that pipeline's state at an epoch. These tests compare every
// view with PostgreSQL given the same input.

// chainViews is a chain of four views over stream s, each over the one
// before: a filter, an aggregate, an aggregate over the aggregate's
// changes (retractions) and a filter over that.
var chainViews = [][2]string{
	{"c1", "SELECT k, v FROM s WHERE v % 3 <> 0"},
	{"c2", "SELECT k, sum(v) AS total, count(*) AS n FROM c1 GROUP BY k"},
	{"c3", "SELECT n, count(*) AS groups, sum(total) AS total FROM c2 GROUP BY n"},
	{"c4", "SELECT n, groups FROM c3 WHERE total > 0"},
}

// edgeEvents are the stream's events: n pairs (k, v) drawn from seed.
func edgeEvents(seed uint64, n int) [][2]int {
	r := rand.New(rand.NewPCG(seed, 17))
	out := make([][2]int, n)
	for i := range out {
		out[i] = [2]int{r.IntN(41), r.IntN(2000) - 700}
	}
	return out
}

// toPostgres inserts events into PostgreSQL's table s.
func toPostgres(t *testing.T, pg *pgx.Conn, evs [][2]int) {
	t.Helper()
	rows := make([][]any, len(evs))
	for i, e := range evs {
		rows[i] = []any{int32(e[0]), int32(e[1])}
	}
	if _, err := pg.CopyFrom(testutil.Context(t, time.Minute), pgx.Identifier{"s"}, []string{"k", "v"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
}

func publishEvents(t *testing.T, js jetstream.JetStream, subject string, evs [][2]int) {
	t.Helper()
	publishMany(t, js, subject, len(evs), func(i int) string { return fmt.Sprintf(`{"k": %d, "v": %d}`, evs[i][0], evs[i][1]) })
}

// publishInBackground publishes evs from another goroutine; the returned
// function waits for it and fails the test on a publish error.
func publishInBackground(t *testing.T, js jetstream.JetStream, subject string, evs [][2]int) (wait func()) {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for i, e := range evs {
			if _, err := js.PublishAsync(subject, fmt.Appendf(nil, `{"k": %d, "v": %d}`, e[0], e[1])); err != nil {
				done <- err
				return
			}
			if (i+1)%2000 == 0 || i == len(evs)-1 {
				select {
				case <-js.PublishAsyncComplete():
				case <-ctx.Done():
					done <- fmt.Errorf("publishes not acknowledged in time")
					return
				}
			}
		}
		done <- nil
	}()
	return func() {
		t.Helper()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// sameAsPostgres compares every view with the same query in PostgreSQL.
func sameAsPostgres(t *testing.T, conn, pg *pgx.Conn, views [][2]string, when string) {
	t.Helper()
	for _, v := range views {
		q := "SELECT * FROM " + v[0]
		got, want := testutil.SortedRows(t, conn, q), testutil.SortedRows(t, pg, q)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %s has %d rows, PostgreSQL %d\n got: %s\nwant: %s", when, v[0], len(got), len(want),
				strings.Join(first(got, 12), " | "), strings.Join(first(want, 12), " | "))
		}
	}
}

func first(rows []string, n int) []string { return rows[:min(n, len(rows))] }

func createViews(t *testing.T, conn *pgx.Conn, pgViews bool, views [][2]string) {
	t.Helper()
	for _, v := range views {
		if pgViews {
			exec(t, conn, "CREATE VIEW "+v[0]+" AS "+v[1])
		} else {
			exec(t, conn, "CREATE MATERIALIZED VIEW "+v[0]+" AS "+v[1])
		}
	}
}

// TestViewChainExact: a chain of four views over a stream, half created
// before the input and half while it is published, then a kill -9 while
// the views work through a backlog and a restart, stays exact.
func TestViewChainExact(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_SEED")
	evs := edgeEvents(seed, 24000)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, pg, "CREATE TABLE s (k int, v int)")
	createViews(t, pg, true, chainViews)
	toPostgres(t, pg, evs[:16000])

	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'edges.s')")
	createViews(t, conn, false, chainViews[:2])
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishEvents(t, js, "edges.s", evs[:8000])
	wait := publishInBackground(t, js, "edges.s", evs[8000:16000])
	createViews(t, conn, false, chainViews[2:])
	wait()
	flush(t, conn)
	sameAsPostgres(t, conn, pg, chainViews, "created before and during load")

	// A backlog the views are still working through when the server dies.
	publishEvents(t, js, "edges.s", evs[16000:20000])
	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	_, js = testutil.JetStream(t, srv.NATSURL())
	publishEvents(t, js, "edges.s", evs[20000:])
	toPostgres(t, pg, evs[16000:])
	flush(t, conn)
	sameAsPostgres(t, conn, pg, chainViews, "after kill -9 and restart")
}

// TestViewOverTableFromState: a view created over a table after many
// updates starts from the table's rows, not its changelog (it takes in one
// row per table row), and views over it and over the table stay exact
// through updates made while they are created.
func TestViewOverTableFromState(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	tableViews := [][2]string{
		{"before", "SELECT id % 4 AS g, sum(x) AS total, count(*) AS n FROM t GROUP BY id % 4"},
		{"after", "SELECT id % 3 AS g, sum(x) AS total, count(*) AS n FROM t GROUP BY id % 3"},
		{"above", "SELECT n, sum(total) AS total FROM after GROUP BY n"},
		{"rows", "SELECT id, x FROM t WHERE x % 2 = 0"},
	}
	var values []string
	for i := 1; i <= 20; i++ {
		values = append(values, fmt.Sprintf("(%d, %d)", i, i*10))
	}
	for _, c := range []*pgx.Conn{pg, conn} {
		exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, x int)", "INSERT INTO t VALUES "+strings.Join(values, ", "))
	}
	createViews(t, conn, false, tableViews[:1])
	const updates = 200
	for i := 0; i < updates; i++ {
		q := fmt.Sprintf("UPDATE t SET x = x + %d", i%7+1)
		exec(t, conn, q)
		exec(t, pg, q)
	}
	createViews(t, conn, false, tableViews[1:2])
	fams := srv.Metrics(t)
	// The changelog holds 20 inserts and 200 updates of every row (8020
	// changes); the new view read the table's 20 rows.
	if got := metricValue(t, fams, "streamdb_view_rows_in_total", "view", "after"); got != 20 {
		t.Fatalf("the new view over t took in %v rows, want the table's 20 rows", got)
	}

	// Updates and deletes while views are created over the table and
	// over the new view.
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		w, err := pgx.Connect(ctx, srv.DSN())
		if err != nil {
			done <- err
			return
		}
		defer w.Close(context.Background())
		for i := 0; i < 150; i++ {
			q := fmt.Sprintf("UPDATE t SET x = (x * 3 - %d) %% 100003 WHERE id %% 5 = %d", i, i%5)
			if i%50 == 49 {
				q = fmt.Sprintf("DELETE FROM t WHERE id = %d", i/50+1)
			}
			if _, err := w.Exec(ctx, q); err != nil {
				done <- fmt.Errorf("%s: %w", q, err)
				return
			}
			if _, err := pg.Exec(ctx, q); err != nil {
				done <- fmt.Errorf("PostgreSQL: %s: %w", q, err)
				return
			}
		}
		done <- nil
	}()
	createViews(t, conn, false, tableViews[2:])
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	createViews(t, pg, true, tableViews)
	sameAsPostgres(t, conn, pg, tableViews, "after updates during CREATE")

	srv.Kill(t)
	srv.Restart(t)
	conn = srv.Conn(t)
	exec(t, conn, "UPDATE t SET x = x + 1 WHERE id > 10")
	exec(t, pg, "UPDATE t SET x = x + 1 WHERE id > 10")
	sameAsPostgres(t, conn, pg, tableViews, "after kill -9 and restart")
}

// TestViewEdgesRollbackAndDrop: ROLLBACK TO SAVEPOINT brings a chain of
// views back exactly, a view others read cannot be dropped without
// CASCADE, and dropping the last view of the chain leaves the others
// updating.
func TestViewEdgesRollbackAndDrop(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_SEED")
	evs := edgeEvents(seed, 9000)
	pg := testutil.StartPostgres(t).Conn(t)
	exec(t, pg, "CREATE TABLE s (k int, v int)")
	createViews(t, pg, true, chainViews)

	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'edges.s')")
	createViews(t, conn, false, chainViews)
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishEvents(t, js, "edges.s", evs[:3000])
	toPostgres(t, pg, evs[:3000])
	flush(t, conn)
	exec(t, conn, "SAVEPOINT three_thousand")
	publishEvents(t, js, "edges.s", evs[3000:6000])
	flush(t, conn)
	exec(t, conn, "ALTER SYSTEM PAUSE", "ROLLBACK TO SAVEPOINT three_thousand")
	sameAsPostgres(t, conn, pg, chainViews, "rolled back, paused")
	exec(t, conn, "ALTER SYSTEM RESUME")
	toPostgres(t, pg, evs[3000:6000])
	flush(t, conn)
	sameAsPostgres(t, conn, pg, chainViews, "rolled back and resumed")

	wantExecCode(t, conn, "DROP MATERIALIZED VIEW c2", "2BP01")
	exec(t, conn, "DROP MATERIALIZED VIEW c4")
	publishEvents(t, js, "edges.s", evs[6000:7500])
	toPostgres(t, pg, evs[6000:7500])
	flush(t, conn)
	sameAsPostgres(t, conn, pg, chainViews[:3], "after dropping c4")
	// Re-created under load, it starts from c3's state.
	wait := publishInBackground(t, js, "edges.s", evs[7500:])
	createViews(t, conn, false, chainViews[3:])
	wait()
	toPostgres(t, pg, evs[7500:])
	flush(t, conn)
	sameAsPostgres(t, conn, pg, chainViews, "after re-creating c4")
	exec(t, conn, "DROP MATERIALIZED VIEW c2 CASCADE")
	wantExecCode(t, conn, "SELECT * FROM c4", "42P01")
	sameAsPostgres(t, conn, pg, chainViews[:1], "after DROP CASCADE")
}

// TestViewOverJoinOfTableAndStream: a view created over a view that joins
// a stream with a table (an edge and a stream reader aligned in one
// pipeline) attaches and stays exact.
func TestViewOverJoinOfTableAndStream(t *testing.T) {
	seed := testutil.Seed(t, "STREAMDB_SEED")
	evs := edgeEvents(seed, 4000)
	pg := testutil.StartPostgres(t).Conn(t)
	srv := startServer(t)
	conn := srv.Conn(t)
	views := [][2]string{
		{"j", "SELECT a.region, s.k % 5 AS b, count(*) AS n, sum(s.v) AS total FROM s JOIN a ON s.k = a.k GROUP BY a.region, s.k % 5"},
		{"on_j", "SELECT region, sum(n) AS n, sum(total) AS total FROM j GROUP BY region"},
	}
	var values []string
	for k := 0; k < 41; k++ {
		values = append(values, fmt.Sprintf("(%d, 'r%d')", k, k%4))
	}
	exec(t, pg, "CREATE TABLE s (k int, v int)")
	for _, c := range []*pgx.Conn{pg, conn} {
		exec(t, c, "CREATE TABLE a (k int PRIMARY KEY, region text)", "INSERT INTO a VALUES "+strings.Join(values, ", "))
	}
	createViews(t, pg, true, views)
	exec(t, conn, "CREATE STREAM s (k int, v int) WITH (subject = 'edges.s')")
	createViews(t, conn, false, views[:1])
	_, js := testutil.JetStream(t, srv.NATSURL())
	publishEvents(t, js, "edges.s", evs[:2000])
	toPostgres(t, pg, evs[:2000])
	flush(t, conn)
	createViews(t, conn, false, views[1:])
	publishEvents(t, js, "edges.s", evs[2000:])
	toPostgres(t, pg, evs[2000:])
	for _, c := range []*pgx.Conn{pg, conn} {
		exec(t, c, "UPDATE a SET region = 'moved' WHERE k % 7 = 0")
	}
	flush(t, conn)
	sameAsPostgres(t, conn, pg, views, "view over a join of a stream and a table")
}
