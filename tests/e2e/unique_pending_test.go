package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestUniqueConcurrentInsertsOneWins has many sessions insert the same
// UNIQUE values at once (autocommit, so most checks meet commits of other
// sessions that the table's state does not hold yet): on streamdb as on
// PostgreSQL 15, exactly one insert wins per value, every other one fails
// with 23505, and a UNIQUE index of a second column holds the same way.
func TestUniqueConcurrentInsertsOneWins(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	srv := startServer(t)
	pg := testutil.StartPostgres(t)
	for _, target := range []struct {
		name string
		conn func(t testing.TB) *pgx.Conn
	}{{"streamdb", srv.Conn}, {"PostgreSQL", pg.Conn}} {
		setup := target.conn(t)
		exec(t, setup, "CREATE TABLE uw (k int PRIMARY KEY, v int UNIQUE, w int)", "CREATE UNIQUE INDEX uw_w ON uw (w)")
		const sessions, values = 6, 40
		var mu sync.Mutex
		wins := map[int]int{}     // value -> inserts that succeeded
		codes := map[string]int{} // SQLSTATE of each failure
		var wg sync.WaitGroup
		for s := range sessions {
			conn := target.conn(t)
			order := rand.New(rand.NewSource(seed + int64(s))).Perm(values)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				for _, v := range order {
					// v for v, and for w too on odd keys of even values:
					// some conflicts are the unique index's alone.
					k := s*1000 + v
					w := v
					if v%2 == 0 && s%2 == 1 {
						w = 10000 + k
					}
					_, err := conn.Exec(ctx, "INSERT INTO uw VALUES ($1, $2, $3)", k, v, w)
					mu.Lock()
					if err == nil {
						wins[v]++
					} else {
						codes[testutil.SQLState(err)]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		for v := range values {
			if wins[v] != 1 {
				t.Errorf("%s: value %d was inserted %d times, want once (seed %d)", target.name, v, wins[v], seed)
			}
		}
		if len(codes) != 1 || codes["23505"] != sessions*values-values {
			t.Errorf("%s: failures by SQLSTATE %v, want %d of 23505 (seed %d)", target.name, codes, sessions*values-values, seed)
		}
		wantRows(t, setup, "SELECT count(*), count(DISTINCT v), count(DISTINCT w) FROM uw", fmt.Sprintf("%d %d %d", values, values, values))
	}
}

// TestUniquePendingMovesAndDeletes runs, on streamdb and on PostgreSQL 15,
// quick autocommit statements that take a UNIQUE value, move it with
// UPDATE, free it with DELETE and take it again, while other sessions
// write the table (so the checks meet commits the table's state does not
// hold yet): each statement gets PostgreSQL's outcome, and the tables end
// alike.
func TestUniquePendingMovesAndDeletes(t *testing.T) {
	srv := startServer(t)
	pg := testutil.StartPostgres(t)
	steps := func(base int) [][2]string {
		v := func(i int) int { return base + i }
		return [][2]string{
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d)", v(1), v(0)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d)", v(2), v(0)), "23505"},
			{fmt.Sprintf("UPDATE um SET v = %d WHERE k = %d", v(1), v(1)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d)", v(3), v(0)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d)", v(4), v(1)), "23505"},
			{fmt.Sprintf("UPDATE um SET v = %d WHERE k = %d", v(1), v(3)), "23505"},
			{fmt.Sprintf("DELETE FROM um WHERE k = %d", v(1)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d)", v(5), v(1)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d) ON CONFLICT (v) DO NOTHING", v(6), v(1)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d), (%d, %d)", v(7), v(2), v(8), v(2)), "23505"},
			{fmt.Sprintf("UPDATE um SET v = NULL WHERE k = %d", v(5)), ""},
			{fmt.Sprintf("INSERT INTO um VALUES (%d, %d), (%d, NULL)", v(9), v(1), v(10)), ""},
		}
	}
	final := map[string][]string{}
	for _, target := range []struct {
		name string
		conn func(t testing.TB) *pgx.Conn
	}{{"streamdb", srv.Conn}, {"PostgreSQL", pg.Conn}} {
		conn := target.conn(t)
		exec(t, conn, "CREATE TABLE um (k int PRIMARY KEY, v int UNIQUE)")
		// Background writers keep commits of other sessions pending on
		// um (values of their own, far from the steps') until told to
		// stop.
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for w := range 3 {
			bg := target.conn(t)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					k := 1_000_000 + w*100_000 + i
					if _, err := bg.Exec(ctx, "INSERT INTO um VALUES ($1, $1)", k); err != nil && ctx.Err() == nil {
						t.Errorf("%s: background INSERT %d: %v", target.name, k, err)
						return
					}
				}
			}()
		}
		for round := range 10 {
			for _, st := range steps(round * 100) {
				_, err := conn.Exec(context.Background(), st[0])
				got := ""
				if err != nil {
					got = testutil.SQLState(err)
				}
				if got != st[1] {
					t.Errorf("%s round %d: %s: got %q (%v), want %q as PostgreSQL", target.name, round, st[0], got, err, st[1])
				}
			}
		}
		stop()
		wg.Wait()
		final[target.name] = textRows(t, conn, "SELECT k, v FROM um WHERE k < 1000000 ORDER BY k")
		wantRows(t, conn, "SELECT v, count(*) FROM um WHERE v IS NOT NULL GROUP BY v HAVING count(*) > 1")
	}
	if got, want := final["streamdb"], final["PostgreSQL"]; !slices.Equal(got, want) {
		t.Errorf("the steps' rows on streamdb:\n%v\nwant, as on PostgreSQL:\n%v", got, want)
	}
}
