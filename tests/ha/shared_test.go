package ha

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// What the old active server made outside its views' state is there on
// the server that takes over: a role with a password and a grant (kept in
// the group's roles bucket, not in checkpoints: a password changed after
// the last checkpoint is the one that works), and a savepoint, which lives
// only in the group's bucket: SHOW SAVEPOINTS lists it and ROLLBACK TO
// SAVEPOINT restores it.
func TestTakeoverKeepsRolesAndSavepoints(t *testing.T) {
	// With a password for the bootstrap user every login is checked
	// (without one, loopback sessions are trusted); the helpers' sessions
	// as streamdb take it from PGPASSWORD.
	const adminPW = "admin-pw"
	t.Setenv("PGPASSWORD", adminPW)
	env := []string{"STREAMDB_PASSWORD=" + adminPW}
	url := testutil.StartNATS(t)
	a := startActive(t, url, "shared", env)
	b := startMemberEnv(t, url, "shared", env)
	conn := connectGroup(t, 30*time.Second, a, b)
	if activeAddr(conn) != a.Addr {
		t.Fatal("the first server started is not active")
	}
	testutil.MustExec(t, conn,
		"CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)",
		"INSERT INTO t VALUES (1, 10)",
		"CREATE ROLE alice LOGIN PASSWORD 'first-pw'",
		"GRANT SELECT ON t TO alice",
		"SAVEPOINT before_two",
		"CREATE TABLE later (id BIGINT PRIMARY KEY)",
		"INSERT INTO t VALUES (2, 20)",
		"CHECKPOINT",
		"ALTER ROLE alice PASSWORD 'second-pw'")
	conn.Close(context.Background())
	a.Kill(t)

	c := connectGroup(t, 60*time.Second, b)
	_, rows, err := testutil.QueryText(c, 30*time.Second, "SELECT name, location FROM (SHOW SAVEPOINTS) s", "NULL")
	if err != nil {
		// SHOW is not a subquery everywhere: read it whole.
		_, rows, err = testutil.QueryText(c, 30*time.Second, "SHOW SAVEPOINTS", "NULL")
	}
	if err != nil {
		t.Fatalf("SHOW SAVEPOINTS on the new active server: %v", err)
	}
	found := false
	for _, r := range rows {
		if r[0] == "before_two" && strings.Contains(strings.Join(r, " "), "nats-object://") {
			found = true
		}
	}
	if !found {
		t.Fatalf("SHOW SAVEPOINTS on the new active server: %v; want before_two in the group's bucket", rows)
	}
	// The catalog goes back to the savepoint: table later, created after
	// it, is gone (a table's rows come back from its changelog, so t
	// keeps both).
	testutil.MustExec(t, c, "ROLLBACK TO SAVEPOINT before_two")
	if _, _, err := testutil.QueryText(c, 30*time.Second, "SELECT * FROM later", "NULL"); testutil.SQLState(err) != "42P01" {
		t.Fatalf("table later after ROLLBACK TO SAVEPOINT before_two on the new active server: %v; want 42P01", err)
	}
	_, rows, err = testutil.QueryText(c, 30*time.Second, "SELECT id FROM t ORDER BY id", "NULL")
	if err != nil || len(rows) != 2 {
		t.Fatalf("table t after the rollback: %v, %v; want ids 1 and 2", rows, err)
	}

	login := func(password string) (*pgx.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return pgx.Connect(ctx, fmt.Sprintf("postgres://alice:%s@%s/streamdb?sslmode=disable", password, b.Addr))
	}
	if _, err := login("first-pw"); testutil.SQLState(err) != "28P01" {
		t.Fatalf("alice with the password changed away: %v; want 28P01", err)
	}
	alice, err := login("second-pw")
	if err != nil {
		t.Fatalf("alice with her password on the new active server: %v", err)
	}
	defer alice.Close(context.Background())
	if _, rows, err := testutil.QueryText(alice, 30*time.Second, "SELECT count(*) FROM t", "NULL"); err != nil || rows[0][0] != "2" {
		t.Fatalf("alice's granted SELECT: %v, %v", rows, err)
	}
	_, _, err = testutil.QueryText(alice, 30*time.Second, "INSERT INTO t VALUES (3, 30)", "NULL")
	if testutil.SQLState(err) != "42501" {
		t.Fatalf("alice's INSERT, never granted: %v; want 42501", err)
	}
}
