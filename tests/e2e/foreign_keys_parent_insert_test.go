package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// INSERTs into a table that only other tables reference are committed by
// the table's group commit, without the referencing tables' locks. They
// race child INSERTs that reference the keys being inserted and DELETEs
// of those keys: afterwards no child lacks its parent, every parent key
// an INSERT was acknowledged for is there unless a DELETE removed it, and
// every failure was 23503 (or 40001 at a block's COMMIT).
func TestForeignKeysParentInsertRace(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	srv := startServer(t)
	setup := srv.Conn(t)
	exec(t, setup,
		"CREATE TABLE gp (k int PRIMARY KEY, v int)",
		"CREATE TABLE gc (id int PRIMARY KEY, p int REFERENCES gp)")
	var latest, nextChild atomic.Int64
	var acked, deleted sync.Map // parent key -> true
	var failures sync.Map
	var children atomic.Int64
	run := func(conn *pgx.Conn, stmts []string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, sql := range stmts {
			_, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
			if err == nil {
				continue
			}
			switch testutil.SQLState(err) {
			case "23503", "40001":
			default:
				failures.Store(sql, err.Error())
			}
			if stmts[0] == "BEGIN" {
				conn.Exec(ctx, "ROLLBACK", pgx.QueryExecModeSimpleProtocol)
			}
			return false
		}
		return true
	}
	deadline := time.Now().Add(3 * time.Second)
	var wg sync.WaitGroup
	for s := 0; s < 8; s++ {
		conn := srv.Conn(t)
		rng := rand.New(rand.NewSource(seed + int64(s)))
		role := s % 4
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				switch role {
				case 0, 1: // parents: autocommit, or two in a block
					k := latest.Add(2) - 1
					stmts := []string{fmt.Sprintf("INSERT INTO gp VALUES (%d, %d)", k, k)}
					if rng.Intn(2) == 0 {
						stmts = []string{"BEGIN", stmts[0], fmt.Sprintf("INSERT INTO gp VALUES (%d, %d)", k+1, k), "COMMIT"}
					}
					if run(conn, stmts) {
						acked.Store(k, true)
						if len(stmts) > 1 {
							acked.Store(k+1, true)
						}
					}
				case 2: // children of the newest keys
					k := latest.Load() - int64(rng.Intn(3))
					if run(conn, []string{fmt.Sprintf("INSERT INTO gc VALUES (%d, %d)", nextChild.Add(1), k)}) {
						children.Add(1)
					}
				default: // deletes of the newest keys
					k := latest.Load() - int64(rng.Intn(4))
					deleted.Store(k, true) // whether or not it succeeds
					run(conn, []string{fmt.Sprintf("DELETE FROM gp WHERE k = %d", k)})
				}
			}
		}()
	}
	wg.Wait()
	failures.Range(func(k, v any) bool {
		t.Errorf("%s: %s (seed %d)", k, v, seed)
		return true
	})
	wantRows(t, setup, "SELECT c.id, c.p FROM gc c LEFT JOIN gp ON gp.k = c.p WHERE gp.k IS NULL")
	present := map[int64]bool{}
	rows, err := setup.Query(context.Background(), "SELECT k FROM gp")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k int32
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		present[int64(k)] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	missing := 0
	acked.Range(func(k, _ any) bool {
		if _, gone := deleted.Load(k); !gone && !present[k.(int64)] {
			missing++
			t.Errorf("parent %v was acknowledged but is not in gp (seed %d)", k, seed)
		}
		return missing < 5
	})
	t.Logf("%d parents in gp, keys up to %d, %d children committed (seed %d)", len(present), latest.Load(), children.Load(), seed)
	if children.Load() == 0 {
		t.Logf("no child committed (seed %d)", seed)
	}
}
