package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// Two transactions that each insert the same UNIQUE value, or that insert
// a child and delete its parent, each look fine on their own snapshot; the
// second COMMIT must fail (23505 / 23503), so the table never holds a
// duplicate or an orphan.
func TestConstraintsConcurrentTransactions(t *testing.T) {
	srv := startServer(t)
	a, b := srv.Conn(t), srv.Conn(t)
	exec(t, a,
		"CREATE TABLE u (k int PRIMARY KEY, v int UNIQUE)",
		"CREATE TABLE p (k int PRIMARY KEY)",
		"CREATE TABLE c (id int PRIMARY KEY, p int REFERENCES p)",
		"INSERT INTO p VALUES (1), (2)")

	// UNIQUE: both insert v = 7 under different keys.
	exec(t, a, "BEGIN", "INSERT INTO u VALUES (1, 7)")
	exec(t, b, "BEGIN", "INSERT INTO u VALUES (2, 7)")
	exec(t, a, "COMMIT")
	pe := wantExecCode(t, b, "COMMIT", "23505")
	if pe != nil && pe.ConstraintName != "" && pe.ConstraintName != "u_v_key" {
		t.Errorf("constraint %q, want u_v_key", pe.ConstraintName)
	}
	wantRows(t, a, "SELECT k, v FROM u ORDER BY k", "1 7")

	// Child inserted, then its parent deleted; the child commits first.
	exec(t, a, "BEGIN", "INSERT INTO c VALUES (1, 1)")
	exec(t, b, "BEGIN", "DELETE FROM p WHERE k = 1")
	exec(t, a, "COMMIT")
	wantExecCode(t, b, "COMMIT", "23503")

	// The same, with the parent's delete committing first.
	exec(t, a, "BEGIN", "INSERT INTO c VALUES (2, 2)")
	exec(t, b, "BEGIN", "DELETE FROM p WHERE k = 2")
	exec(t, b, "COMMIT")
	wantExecCode(t, a, "COMMIT", "23503")
	wantRows(t, a, "SELECT id, p FROM c ORDER BY id", "1 1")
	wantRows(t, a, "SELECT k FROM p ORDER BY k", "1")
}

// Many sessions race autocommit statements and transactions on the same
// UNIQUE values and on parents and their children; afterwards no value is
// held twice and no child lacks its parent, and every failure was 23505,
// 23503 or 40001.
func TestConstraintsConcurrentRace(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	srv := startServer(t)
	setup := srv.Conn(t)
	exec(t, setup,
		"CREATE TABLE ru (k int PRIMARY KEY, v int UNIQUE)",
		"CREATE TABLE rp (k int PRIMARY KEY)",
		"CREATE TABLE rc (id int PRIMARY KEY, p int REFERENCES rp)")
	const sessions = 8
	const values = 6
	var next atomic.Int64
	var failures sync.Map
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Second)
	for s := 0; s < sessions; s++ {
		conn := srv.Conn(t)
		rng := rand.New(rand.NewSource(seed + int64(s)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for time.Now().Before(deadline) {
				id := next.Add(1)
				v := rng.Intn(values)
				var stmts []string
				switch rng.Intn(5) {
				case 0:
					stmts = []string{fmt.Sprintf("INSERT INTO ru VALUES (%d, %d)", id, v)}
				case 1:
					stmts = []string{"BEGIN", fmt.Sprintf("INSERT INTO ru VALUES (%d, %d)", id, v), "COMMIT"}
				case 2:
					stmts = []string{fmt.Sprintf("DELETE FROM ru WHERE v = %d", v), fmt.Sprintf("INSERT INTO rp VALUES (%d)", v)}
				case 3:
					stmts = []string{"BEGIN", fmt.Sprintf("INSERT INTO rc VALUES (%d, %d)", id, v), "COMMIT"}
				default:
					stmts = []string{"BEGIN", fmt.Sprintf("DELETE FROM rc WHERE p = %d AND id %% 2 = 0", v), fmt.Sprintf("DELETE FROM rp WHERE k = %d", v), "COMMIT"}
				}
				for _, sql := range stmts {
					_, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
					if err == nil {
						continue
					}
					code := testutil.SQLState(err)
					switch code {
					case "23505", "23503", "40001", "25P02":
					default:
						failures.Store(sql, err.Error())
					}
					if strings.HasPrefix(stmts[0], "BEGIN") {
						conn.Exec(ctx, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	failures.Range(func(k, v any) bool {
		t.Errorf("%s: %s (seed %d)", k, v, seed)
		return true
	})
	wantRows(t, setup, "SELECT v, count(*) FROM ru GROUP BY v HAVING count(*) > 1")
	wantRows(t, setup, "SELECT c.id, c.p FROM rc c LEFT JOIN rp ON rp.k = c.p WHERE c.p IS NOT NULL AND rp.k IS NULL")
	if n := testutil.Scalar(t, setup, "SELECT count(*) FROM rc"); n == "0" {
		t.Logf("no child committed (seed %d)", seed)
	}
}

// NOT NULL, CHECK and UNIQUE hold for COPY as for INSERT.
func TestConstraintsCopy(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn, "CREATE TABLE cp (k int PRIMARY KEY, v int NOT NULL CHECK (v > 0), w int UNIQUE)")
	copyIn := func(data string) error {
		_, err := conn.PgConn().CopyFrom(testutil.Context(t, 30*time.Second), strings.NewReader(data), "COPY cp FROM STDIN")
		return err
	}
	if err := copyIn("1\t1\t1\n2\t2\t2\n"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, copyIn("3\t\\N\t3\n"), "23502")
	wantCode(t, copyIn("3\t0\t3\n"), "23514")
	wantCode(t, copyIn("3\t3\t1\n"), "23505")
	wantCode(t, copyIn("3\t3\t3\n4\t4\t3\n"), "23505")
	wantRows(t, conn, "SELECT k, v, w FROM cp ORDER BY k", "1 1 1", "2 2 2")
}
