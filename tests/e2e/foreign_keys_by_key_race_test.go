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

// Foreign keys whose checks find rows by key stay exact under races:
// children referencing a UNIQUE column of their parent (looked up in the
// unique index a commit holds) and its primary key, found through an
// index on the referencing column when the parent's key goes (CASCADE,
// RESTRICT). Sessions insert children, delete and re-key parents, in
// autocommit statements and transactions; afterwards no child lacks its
// parent, and every failure was 23503, 23505 or 40001.
func TestForeignKeysByKeyRace(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	srv := startServer(t)
	setup := srv.Conn(t)
	exec(t, setup,
		"CREATE TABLE kp (k int PRIMARY KEY, u int UNIQUE)",
		"CREATE TABLE kc (id int PRIMARY KEY, pu int REFERENCES kp (u) ON DELETE CASCADE, pk int REFERENCES kp ON DELETE RESTRICT)",
		"CREATE INDEX kc_pu ON kc (pu)",
		"CREATE INDEX kc_pk ON kc (pk)")
	const sessions = 8
	const values = 6
	var next atomic.Int64
	var failures sync.Map
	var committed atomic.Int64 // child inserts
	var wg sync.WaitGroup
	deadline := time.Now().Add(4 * time.Second)
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
				v, w := rng.Intn(values), rng.Intn(values)
				var stmts []string
				switch rng.Intn(6) {
				case 0:
					stmts = []string{fmt.Sprintf("INSERT INTO kp VALUES (%d, %d)", v, w)}
				case 1:
					stmts = []string{fmt.Sprintf("INSERT INTO kc VALUES (%d, %d, NULL)", id, v)}
				case 2:
					stmts = []string{"BEGIN", fmt.Sprintf("INSERT INTO kc VALUES (%d, %d, %d)", id, v, w), "COMMIT"}
				case 3:
					stmts = []string{fmt.Sprintf("DELETE FROM kp WHERE u = %d", v)}
				case 4:
					stmts = []string{"BEGIN", fmt.Sprintf("DELETE FROM kc WHERE pk = %d", v), fmt.Sprintf("DELETE FROM kp WHERE k = %d", v), "COMMIT"}
				default:
					stmts = []string{fmt.Sprintf("UPDATE kp SET u = %d WHERE k = %d", w, v)}
				}
				ok := true
				for _, sql := range stmts {
					_, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
					if err == nil {
						continue
					}
					ok = false
					switch code := testutil.SQLState(err); code {
					case "23505", "23503", "40001", "25P02":
					default:
						failures.Store(sql, err.Error())
					}
					if strings.HasPrefix(stmts[0], "BEGIN") {
						conn.Exec(ctx, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
					}
					break
				}
				if ok && strings.Contains(strings.Join(stmts, ";"), "INSERT INTO kc") {
					committed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	failures.Range(func(k, v any) bool {
		t.Errorf("%s: %s (seed %d)", k, v, seed)
		return true
	})
	wantRows(t, setup, "SELECT c.id, c.pu FROM kc c LEFT JOIN kp ON kp.u = c.pu WHERE c.pu IS NOT NULL AND kp.u IS NULL")
	wantRows(t, setup, "SELECT c.id, c.pk FROM kc c LEFT JOIN kp ON kp.k = c.pk WHERE c.pk IS NOT NULL AND kp.k IS NULL")
	t.Logf("%d child writes committed, %s children left (seed %d)", committed.Load(), testutil.Scalar(t, setup, "SELECT count(*) FROM kc"), seed)
}
