package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/tests/testutil"
)

// jsStreamFor returns the JetStream stream that holds subject, or "" when
// none does.
func jsStreamFor(t *testing.T, js jetstream.JetStream, subject string) string {
	t.Helper()
	name, err := js.StreamNameBySubject(testutil.Context(t, 10*time.Second), subject)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return ""
	}
	if err != nil {
		t.Fatalf("looking up the JetStream stream of %s: %v", subject, err)
	}
	return name
}

// wantNoJSStream fails unless no JetStream stream holds subject.
func wantNoJSStream(t *testing.T, js jetstream.JetStream, subject, after string) {
	t.Helper()
	if name := jsStreamFor(t, js, subject); name != "" {
		t.Errorf("after %s: JetStream stream %s (subject %s) was left behind", after, name, subject)
	}
}

// execErr runs one statement and returns its error.
func execErr(t *testing.T, conn *pgx.Conn, sql string) error {
	t.Helper()
	_, err := conn.Exec(testutil.Context(t, 60*time.Second), sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

// retireCheckpoints takes more checkpoints than are retained, so that
// every checkpoint taken before is deleted by retention.
func retireCheckpoints(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	for range 4 { // state.checkpoints.num-retained is 3
		exec(t, conn, "CHECKPOINT")
	}
}

// TestTableSubjectNotShared: a table's changelog subject cannot be shared
// with another table or a stream (42710, naming the other relation), while
// streams may still share a subject; the refused statements leave the
// table intact.
func TestTableSubjectNotShared(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE t1 (id BIGINT PRIMARY KEY, v VARCHAR)",
		"INSERT INTO t1 VALUES (1, 'one')")

	for _, sql := range []string{
		"CREATE TABLE t2 (id BIGINT PRIMARY KEY, v VARCHAR) WITH (subject = 'streamdb.table.t1')",
		"CREATE STREAM s1 (id BIGINT, v VARCHAR) WITH (subject = 'streamdb.table.t1')",
		"CREATE TABLE a1 (id BIGINT, v VARCHAR) APPEND ONLY WITH (subject = 'streamdb.table.t1')",
	} {
		pe := wantCode(t, execErr(t, conn, sql), "42710")
		if pe != nil && (!strings.Contains(pe.Message, "t1") || !strings.Contains(pe.Message+pe.Hint, "subject")) {
			t.Errorf("%s: the error should name table t1 and say to choose another subject: %q (hint %q)", testutil.OneLine(sql), pe.Message, pe.Hint)
		}
	}

	// Streams share a subject (their input is their producers'), but a
	// table cannot take it.
	exec(t, conn,
		"CREATE STREAM s2 (x INT) WITH (subject = 'hyg.shared')",
		"CREATE STREAM s3 (x INT) WITH (subject = 'hyg.shared')")
	pe := wantCode(t, execErr(t, conn, "CREATE TABLE t3 (x INT) WITH (subject = 'hyg.shared')"), "42710")
	if pe != nil && !strings.Contains(pe.Message, "stream s2") && !strings.Contains(pe.Message, "stream s3") {
		t.Errorf("the error should name the stream using the subject: %q", pe.Message)
	}

	// Nothing was created, and t1 keeps its changelog to itself.
	for _, name := range []string{"t2", "s1", "a1", "t3"} {
		wantCode(t, execErr(t, conn, "SELECT * FROM "+name), "42P01")
	}
	exec(t, conn, "INSERT INTO t1 VALUES (2, 'two')", "UPDATE t1 SET v = 'uno' WHERE id = 1")
	wantRows(t, conn, "SELECT id, v FROM t1 ORDER BY id", "1 uno", "2 two")
	wantRows(t, conn, "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('t2', 's1', 'a1', 't3')", "0")
}

// TestFailedCreateLeavesNoJetStream: CREATE TABLE / STREAM statements that
// fail their checks create no JetStream stream.
func TestFailedCreateLeavesNoJetStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn, "CREATE TABLE taken (id BIGINT PRIMARY KEY)")
	for _, c := range []struct{ sql, code, subject string }{
		{"CREATE TABLE hd (id BIGINT PRIMARY KEY, v INT DEFAULT 'abc')", "22P02", "streamdb.table.hd"},
		{"CREATE TABLE hw (id BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)", "0A000", "streamdb.table.hw"},
		{"CREATE STREAM hx (x INT, WATERMARK FOR x AS x)", "42804", "hx"},
		{"CREATE TABLE hs (id BIGINT) WITH (subject = 'hyg.own', format = 'avro')", "0A000", "hyg.own"},
		{"CREATE STREAM ht (id BIGINT) WITH (subject = 'streamdb.table.taken')", "42710", "streamdb.table.taken"},
	} {
		wantCode(t, execErr(t, conn, c.sql), c.code)
		if c.code == "42710" {
			// The subject exists (it is taken's): no other JetStream
			// stream may have been made for it.
			if name := jsStreamFor(t, js, c.subject); name != "streamdb_taken" {
				t.Errorf("after %s: subject %s is held by %q, want streamdb_taken", testutil.OneLine(c.sql), c.subject, name)
			}
			continue
		}
		wantNoJSStream(t, js, c.subject, testutil.OneLine(c.sql))
	}
	names := js.StreamNames(testutil.Context(t, 10*time.Second))
	var all []string
	for n := range names.Name() {
		if n != broker.TxnStream { // streamdb's own, made at start
			all = append(all, n)
		}
	}
	if len(all) != 1 || all[0] != "streamdb_taken" {
		t.Errorf("JetStream streams after the failed CREATEs: %v, want only streamdb_taken", all)
	}
}

// startNATSDenying runs a NATS server with JetStream in the test process
// with two users: admin may do anything, streamdb may not publish to the
// subjects in deny. It returns streamdb's URL and admin's.
func startNATSDenying(t *testing.T, deny ...string) (streamdbURL, adminURL string) {
	t.Helper()
	s := testutil.StartNATSServerWith(t, func(opts *natsserver.Options) {
		opts.Users = []*natsserver.User{
			{Username: "admin", Password: "admin"},
			{Username: "streamdb", Password: "streamdb", Permissions: &natsserver.Permissions{
				Publish: &natsserver.SubjectPermission{Allow: []string{">"}, Deny: deny},
			}},
		}
	})
	addr := s.Addr().String()
	return "nats://streamdb:streamdb@" + addr, "nats://admin:admin@" + addr
}

// TestCreateTableUndoesItsJetStream: when CREATE TABLE fails after it has
// created the table's JetStream stream (here: streamdb may not read the
// stream's info), the stream is deleted again and the table does not exist;
// the name stays usable.
func TestCreateTableUndoesItsJetStream(t *testing.T) {
	streamdbURL, adminURL := startNATSDenying(t, "$JS.API.STREAM.INFO.streamdb_undone")
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: streamdbURL})
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, adminURL)

	err := execErr(t, conn, "CREATE TABLE undone (id BIGINT PRIMARY KEY, v VARCHAR)")
	if err == nil {
		t.Fatal("CREATE TABLE undone succeeded although streamdb may not read its JetStream stream")
	}
	pgError(t, err)
	wantNoJSStream(t, js, "streamdb.table.undone", "the failed CREATE TABLE")
	if _, err := js.Stream(testutil.Context(t, 10*time.Second), "streamdb_undone"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("JetStream stream streamdb_undone after the failed CREATE TABLE: %v, want not found", err)
	}
	wantCode(t, execErr(t, conn, "SELECT * FROM undone"), "42P01")

	// The server goes on, and other tables work.
	exec(t, conn, "CREATE TABLE fine (id BIGINT PRIMARY KEY)", "INSERT INTO fine VALUES (7)")
	wantRows(t, conn, "SELECT id FROM fine", "7")
}

// TestDropTableDeletesJetStream: DROP TABLE (also through CASCADE) deletes
// the table's JetStream stream once retention has deleted the checkpoints
// that hold the table; DROP STREAM keeps its JetStream stream.
func TestDropTableDeletesJetStream(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		"CREATE TABLE dt (id BIGINT PRIMARY KEY, v VARCHAR)",
		"CREATE TABLE dc (id BIGINT PRIMARY KEY, n INT)",
		"CREATE MATERIALIZED VIEW dc_sum AS SELECT sum(n) AS total FROM dc",
		"CREATE STREAM ds (x INT) WITH (subject = 'hyg.ds')",
		"INSERT INTO dt VALUES (1, 'a')",
		"INSERT INTO dt VALUES (2, 'b')",
		"INSERT INTO dc VALUES (1, 10)",
		"INSERT INTO ds VALUES (5)")
	for _, subj := range []string{"streamdb.table.dt", "streamdb.table.dc", "hyg.ds"} {
		if jsStreamFor(t, js, subj) == "" {
			t.Fatalf("no JetStream stream for %s after CREATE", subj)
		}
	}
	exec(t, conn, "DROP TABLE dt", "DROP TABLE dc CASCADE", "DROP STREAM ds")
	retireCheckpoints(t, conn)
	poll(t, 30*time.Second, func() error {
		for _, subj := range []string{"streamdb.table.dt", "streamdb.table.dc"} {
			if name := jsStreamFor(t, js, subj); name != "" {
				return fmt.Errorf("JetStream stream %s of dropped table (subject %s) still exists", name, subj)
			}
		}
		return nil
	})
	if jsStreamFor(t, js, "hyg.ds") == "" {
		t.Error("DROP STREAM deleted the stream's JetStream stream; its input belongs to its producers")
	}

	// A table of the same name starts empty, and reads of it do not wait
	// for the sequences of the deleted stream (its writes were
	// acknowledged at sequences the new stream has not reached).
	exec(t, conn, "CREATE TABLE dt (id BIGINT PRIMARY KEY, v VARCHAR)", "SET statement_timeout = '20s'")
	wantRows(t, conn, "SELECT count(*) FROM dt", "0")
	exec(t, conn, "INSERT INTO dt VALUES (3, 'c')")
	wantRows(t, conn, "SELECT id, v FROM dt ORDER BY id", "3 c")
}

// TestRollbackBringsBackDroppedTable: a savepoint taken before DROP TABLE
// keeps the table's JetStream stream alive after retention has deleted
// every checkpoint holding the table, and ROLLBACK TO SAVEPOINT brings the
// table back with its rows. Once the table is dropped again and the
// savepoint released, the stream goes. Both state backends (the collector
// reads the retained points' catalogs).
func TestRollbackBringsBackDroppedTable(t *testing.T) {
	for _, backend := range []string{"pebble", "memory"} {
		t.Run(backend, func(t *testing.T) {
			srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_STATE_BACKEND=" + backend}})
			rollbackBringsBackDroppedTable(t, srv, backend)
		})
	}
}

func rollbackBringsBackDroppedTable(t *testing.T, srv *testutil.Server, backend string) {
	conn := srv.Conn(t)
	wantRows(t, conn, "SHOW state.backend", backend)
	_, js := testutil.JetStream(t, srv.NATSURL())
	exec(t, conn,
		"CREATE TABLE rt (id BIGINT PRIMARY KEY, v VARCHAR)",
		"INSERT INTO rt VALUES (1, 'a'), (2, 'b')",
		"UPDATE rt SET v = 'bb' WHERE id = 2",
		"SAVEPOINT before_drop",
		"DROP TABLE rt")
	name := jsStreamFor(t, js, "streamdb.table.rt")
	if name == "" {
		t.Fatal("DROP TABLE deleted the JetStream stream that savepoint before_drop still needs")
	}
	retireCheckpoints(t, conn)
	// A DROP runs the collector before it returns: after it, only the
	// savepoint holds rt.
	exec(t, conn, "CREATE TABLE other (id BIGINT PRIMARY KEY)", "DROP TABLE other")
	if jsStreamFor(t, js, "streamdb.table.rt") != name {
		t.Fatal("the JetStream stream of rt went while savepoint before_drop holds the table")
	}

	exec(t, conn, "ROLLBACK TO SAVEPOINT before_drop")
	wantRows(t, conn, "SELECT id, v FROM rt ORDER BY id", "1 a", "2 bb")
	exec(t, conn, "INSERT INTO rt VALUES (3, 'c')")
	wantRows(t, conn, "SELECT id, v FROM rt ORDER BY id", "1 a", "2 bb", "3 c")

	exec(t, conn, "DROP TABLE rt", "RELEASE SAVEPOINT before_drop")
	retireCheckpoints(t, conn)
	poll(t, 30*time.Second, func() error {
		if n := jsStreamFor(t, js, "streamdb.table.rt"); n != "" {
			return fmt.Errorf("JetStream stream %s of rt still exists after the savepoint was released", n)
		}
		return nil
	})
}

// TestDroppedTableStreamCollectedAfterRestart: the JetStream stream of a
// table dropped while a savepoint held it is still deleted by a later run,
// once the savepoint is released (the server finds its own tables' streams
// in JetStream; the collector starts with the first DDL of a run).
func TestDroppedTableStreamCollectedAfterRestart(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE rr (id BIGINT PRIMARY KEY)",
		"INSERT INTO rr VALUES (1)",
		"SAVEPOINT keep_rr",
		"DROP TABLE rr")
	conn.Close(context.Background())
	srv.Restart(t)
	conn = srv.Conn(t)
	_, js := testutil.JetStream(t, srv.NATSURL())
	if jsStreamFor(t, js, "streamdb.table.rr") == "" {
		t.Fatal("the JetStream stream of rr went while savepoint keep_rr holds the table")
	}
	exec(t, conn, "RELEASE SAVEPOINT keep_rr")
	retireCheckpoints(t, conn)
	exec(t, conn, "CREATE TABLE other (id BIGINT PRIMARY KEY)", "DROP TABLE other")
	poll(t, 30*time.Second, func() error {
		if n := jsStreamFor(t, js, "streamdb.table.rr"); n != "" {
			return fmt.Errorf("JetStream stream %s of rr still exists after a restart and RELEASE SAVEPOINT", n)
		}
		return nil
	})
}
