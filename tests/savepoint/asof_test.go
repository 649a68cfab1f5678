package savepoint

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestAsOfWhileInputFlows: AS OF SAVEPOINT, AS OF CHECKPOINT and AS OF
// TIMESTAMP keep returning the state at that point while a producer keeps
// inserting and the live views move on; at the end the live views equal
// PostgreSQL's answer over all input.
func TestAsOfWhileInputFlows(t *testing.T) {
	rng := seedFor(t)
	ref := newReference(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	// Keep every checkpoint so that AS OF CHECKPOINT keeps finding ours.
	testutil.MustExec(t, conn, "ALTER SYSTEM SET state.checkpoints.num-retained = 1000")

	queries := viewQueries()
	names := keys(queries)
	testutil.MustExec(t, conn, streamDDL("ev", "ev.asof"))
	for _, n := range names {
		testutil.MustExec(t, conn, fmt.Sprintf("CREATE MATERIALIZED VIEW %s AS %s", n, queries[n]))
	}
	b1 := genRows(rng, 1, 200+rng.IntN(300))
	insert(t, conn, "ev", b1)
	testutil.MustExec(t, conn, "FLUSH", "SAVEPOINT sp", "CHECKPOINT")
	chk := newestCheckpoint(t, conn, "manual")
	created := savepointTime(t, conn, "sp")
	// A time just after the savepoint, before any further input: the
	// newest point at or before it holds the savepoint's state.
	ts := created.Add(time.Millisecond)
	for time.Now().Before(ts.Add(5 * time.Millisecond)) {
		time.Sleep(time.Millisecond) // waits until the clock has passed ts
	}
	wantSP := ref.answer("ev", b1, queries)

	points := []string{
		" AS OF SAVEPOINT sp",
		fmt.Sprintf(" AS OF CHECKPOINT %d", chk),
		fmt.Sprintf(" AS OF TIMESTAMP '%s'", ts.Format("2006-01-02 15:04:05.000000")),
	}
	for _, p := range points {
		compareViews(t, "before input flows:"+p, wantSP, viewRows(t, conn, names, p))
	}

	// The producer.
	prod := srv.Conn(t)
	var (
		mu       sync.Mutex
		produced = append([]row(nil), b1...)
		stop     = make(chan struct{})
		done     = make(chan error, 1)
	)
	go func() {
		next := int64(100_000)
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			mu.Lock()
			rows := genRows(rng, next, 1+rng.IntN(8))
			mu.Unlock()
			next += int64(len(rows))
			if err := testutil.ExecSimple(prod, 30*time.Second, insertSQL("ev", rows)); err != nil {
				done <- fmt.Errorf("producer: %v", err)
				return
			}
			mu.Lock()
			produced = append(produced, rows...)
			mu.Unlock()
		}
	}()

	deadline := time.Now().Add(3 * time.Second)
	rounds, moved := 0, false
	for time.Now().Before(deadline) && !t.Failed() {
		for _, p := range points {
			compareViews(t, fmt.Sprintf("round %d, input flowing:%s", rounds, p), wantSP, viewRows(t, conn, names, p))
		}
		// Ad-hoc queries over the point: aggregates, filters, parameters.
		if got, want := testutil.Scalar(t, conn, "SELECT sum(n) FROM per_g AS OF SAVEPOINT sp"), strconv.Itoa(len(b1)); got != want {
			t.Errorf("sum(n) over per_g AS OF SAVEPOINT sp: got %s, want %s", got, want)
		}
		checkPreparedAsOf(t, conn, wantSP["per_g"])
		if n, _ := strconv.Atoi(testutil.Scalar(t, conn, "SELECT n FROM totals")); n > len(b1) {
			moved = true
		}
		rounds++
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !moved {
		t.Errorf("the live view never moved past the savepoint while the producer ran")
	}
	t.Logf("%d rounds of AS OF reads while %d rows were produced", rounds, len(produced)-len(b1))

	testutil.MustExec(t, conn, "FLUSH")
	compareViews(t, "live views after FLUSH vs PostgreSQL over all input", ref.answer("ev", produced, queries), viewRows(t, conn, names, ""))
	for _, p := range points {
		compareViews(t, "after the producer stopped:"+p, wantSP, viewRows(t, conn, names, p))
	}
}

// checkPreparedAsOf runs an AS OF query with a parameter over the extended
// protocol.
func checkPreparedAsOf(t testing.TB, conn *pgx.Conn, perG []string) {
	t.Helper()
	want := map[string]string{}
	for _, r := range perG {
		f := strings.Split(r, "|")
		want[f[0]] = f[1] + "|" + f[2]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, g := range []string{"a", "c", "e"} {
		rows, err := conn.Query(ctx, "SELECT n, s FROM per_g AS OF SAVEPOINT sp WHERE g = $1", g)
		if err != nil {
			t.Fatalf("prepared AS OF: %v", err)
		}
		var got []string
		for rows.Next() {
			var n int64
			var s string
			if err := rows.Scan(&n, &s); err != nil {
				t.Fatalf("prepared AS OF scan: %v", err)
			}
			got = append(got, fmt.Sprintf("%d|%s", n, s))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("prepared AS OF: %v", err)
		}
		w := []string{}
		if v, ok := want[g]; ok {
			w = []string{v}
		}
		if !slices.Equal(w, got) {
			t.Errorf("prepared AS OF SAVEPOINT with g = %s: %s", g, diffRows(w, got))
		}
	}
}

// newestCheckpoint is the id of the newest completed checkpoint with the
// trigger.
func newestCheckpoint(t testing.TB, conn *pgx.Conn, trigger string) int64 {
	t.Helper()
	var ids []int64
	for _, r := range mustQuery(t, conn, "SHOW CHECKPOINTS") {
		if r[1] == "completed" && r[2] == trigger {
			id, _ := strconv.ParseInt(r[0], 10, 64)
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("no completed %s checkpoint", trigger)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids[len(ids)-1]
}

// savepointTime is a savepoint's created_at from SHOW SAVEPOINTS.
func savepointTime(t testing.TB, conn *pgx.Conn, name string) time.Time {
	t.Helper()
	for _, r := range mustQuery(t, conn, "SHOW SAVEPOINTS") {
		if r[0] == name {
			ts, err := time.Parse("2006-01-02 15:04:05.999999-07", r[3])
			if err != nil {
				t.Fatalf("created_at %q: %v", r[3], err)
			}
			return ts.UTC()
		}
	}
	t.Fatalf("savepoint %s not in SHOW SAVEPOINTS", name)
	return time.Time{}
}
