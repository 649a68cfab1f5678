package recovery

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// TestCommitCrashPoints kills the server (faults.Crash, as kill -9) at
// each point of a commit that goes through the transaction stream: a
// transaction over two tables, and one INSERT too large for one message.
// After the restart each commit is all there or all absent, as the point
// it died at decides, views agree with the tables, and later commits work.
func TestCommitCrashPoints(t *testing.T) {
	cases := []struct {
		point string
		kept  bool
		// single: a commit to one subject reaches the point (one of
		// several data messages asks for a decision, as a COPY does).
		single bool
	}{
		{"txn-after-data", false, true},
		{"txn-before-decision", false, true},
		{"txn-after-decision", true, true},
	}
	for _, c := range cases {
		t.Run(c.point, func(t *testing.T) {
			srv := startServer(t, testutil.ServerOptions{})
			conn := srv.Conn(t)
			testutil.MustExec(t, conn,
				"CREATE TABLE ka (id BIGINT PRIMARY KEY, pad TEXT)",
				"CREATE TABLE kb (id BIGINT PRIMARY KEY, pad TEXT)",
				"CREATE MATERIALIZED VIEW kj AS SELECT count(*) AS n FROM ka JOIN kb USING (id)",
				"CREATE MATERIALIZED VIEW kan AS SELECT count(*) AS n FROM ka",
				"INSERT INTO ka VALUES (1, 'x')", "INSERT INTO kb VALUES (1, 'x')")

			// A transaction over two tables.
			srv.SetEnv("STREAMDB_FAULTS=" + c.point)
			srv.Restart(t)
			conn = srv.Conn(t)
			if err := execAll(conn, "BEGIN", "INSERT INTO ka VALUES (2, 'y')", "INSERT INTO kb VALUES (2, 'y')", "COMMIT"); err == nil {
				t.Fatalf("COMMIT answered although the server crashed at %s", c.point)
			}
			srv.Kill(t)
			srv.SetEnv()
			srv.Restart(t)
			conn = srv.Conn(t)
			want := "1"
			if c.kept {
				want = "2"
			}
			wantRow(t, conn, "SELECT count(*) FROM ka", want)
			wantRow(t, conn, "SELECT count(*) FROM kb", want)
			testutil.MustExec(t, conn, "FLUSH")
			wantRow(t, conn, "SELECT n FROM kj", want)

			// One INSERT over NATS's max_payload (1 MiB): 40,000 rows of
			// about 60 bytes each.
			srv.SetEnv("STREAMDB_FAULTS=" + c.point)
			srv.Restart(t)
			conn = srv.Conn(t)
			const big = "INSERT INTO ka SELECT g, repeat('z', 40) FROM generate_series(100, 40099) g"
			bigKept := c.kept || !c.single
			if err := execAll(conn, big); (err == nil) != !c.single {
				t.Fatalf("the INSERT at %s: %v", c.point, err)
			}
			srv.Kill(t)
			srv.SetEnv()
			srv.Restart(t)
			conn = srv.Conn(t)
			n := atoi(t, want)
			if bigKept {
				n += 40000
			}
			wantRow(t, conn, "SELECT count(*) FROM ka", fmt.Sprint(n))
			testutil.MustExec(t, conn, "FLUSH")
			wantRow(t, conn, "SELECT n FROM kan", fmt.Sprint(n))

			// Later commits of both kinds work and are seen.
			testutil.MustExec(t, conn,
				"BEGIN", "INSERT INTO ka VALUES (3, 'y')", "INSERT INTO kb VALUES (3, 'y')", "COMMIT",
				"INSERT INTO kb SELECT g, repeat('z', 40) FROM generate_series(100, 40099) g", "FLUSH")
			joined := 2 // ids 1 and 3
			if c.kept {
				joined++ // id 2
			}
			if bigKept {
				joined += 40000
			}
			wantRow(t, conn, "SELECT n FROM kj", fmt.Sprint(joined))
		})
	}
}

// TestRefusedCommitLeavesNothing has JetStream refuse one subject of a
// commit (its stream is full) and checks that nothing of the commit is
// visible anywhere: a transaction over a table and a stream, and an
// INSERT too large for one message.
func TestRefusedCommitLeavesNothing(t *testing.T) {
	ns := testutil.StartNATSServer(t)
	srv := startServer(t, testutil.ServerOptions{NATSURL: ns.ClientURL()})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE ta (id BIGINT PRIMARY KEY, pad TEXT)",
		"CREATE STREAM lim (v BIGINT) WITH (subject = 'lim.events')",
		"CREATE MATERIALIZED VIEW lim_sum AS SELECT count(*) AS n, coalesce(sum(v), 0) AS s FROM lim",
		"CREATE MATERIALIZED VIEW ta_n AS SELECT count(*) AS n FROM ta",
		"INSERT INTO ta VALUES (1, 'x')", "INSERT INTO lim VALUES (1)", "FLUSH")
	_, js := testutil.JetStream(t, ns.ClientURL())
	ctx := testutil.Context(t, 5*time.Minute)
	full := func(subject string, maxMsgs int64, maxMsgSize int32) {
		t.Helper()
		name, err := js.StreamNameBySubject(ctx, subject)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		cfg := stream.CachedInfo().Config
		cfg.MaxMsgs, cfg.MaxMsgSize, cfg.Discard = maxMsgs, maxMsgSize, jetstream.DiscardNew
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	refused := func(sqls ...string) {
		t.Helper()
		err := execAll(conn, sqls...)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%q with a full stream: want an error with a SQLSTATE, got %v", sqls, err)
		}
		if pe.Code == "08007" {
			t.Fatalf("%q: %s %s: the commit must be refused whole, not partly published", sqls, pe.Code, pe.Message)
		}
		if tx := conn.PgConn().TxStatus(); tx != 'I' {
			testutil.MustExec(t, conn, "ROLLBACK")
		}
	}
	unchanged := func() {
		t.Helper()
		wantRow(t, conn, "SELECT count(*) FROM ta", "1")
		testutil.MustExec(t, conn, "FLUSH")
		wantRow(t, conn, "SELECT n FROM ta_n", "1")
		wantRow(t, conn, "SELECT n, s FROM lim_sum", "1 1")
	}

	// lim holds its one message and takes no more; ta's changelog (which
	// purges may empty) takes no message of any size.
	full("lim.events", 1, -1)
	refused("BEGIN", "INSERT INTO ta VALUES (2, 'y')", "INSERT INTO lim VALUES (2)", "INSERT INTO lim VALUES (3)", "COMMIT")
	unchanged()
	full("streamdb.table.ta", -1, 16)
	refused("INSERT INTO ta SELECT g, repeat('z', 40) FROM generate_series(100, 40099) g")
	unchanged()

	full("lim.events", -1, -1)
	full("streamdb.table.ta", -1, -1)
	testutil.MustExec(t, conn,
		"BEGIN", "INSERT INTO ta VALUES (2, 'y')", "INSERT INTO lim VALUES (2)", "INSERT INTO lim VALUES (3)", "COMMIT",
		"INSERT INTO lim VALUES (10), (11), (12)",
		"INSERT INTO ta SELECT g, repeat('z', 40) FROM generate_series(100, 40099) g", "FLUSH")
	wantRow(t, conn, "SELECT count(*) FROM ta", "40002")
	wantRow(t, conn, "SELECT n FROM ta_n", "40002")
	wantRow(t, conn, "SELECT n, s FROM lim_sum", "6 39")
}

// TestForgedTxnReference publishes, as any producer may on a stream's
// subject, a reference message naming the data of a real transaction
// over two tables: readers must not take that data into the stream (the
// transaction's intent does not name the stream's subject), and go on.
func TestForgedTxnReference(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE fa (id BIGINT PRIMARY KEY)", "CREATE TABLE fb (id BIGINT PRIMARY KEY)",
		"CREATE STREAM fs (id BIGINT) WITH (subject = 'forge.events')",
		"CREATE MATERIALIZED VIEW fs_n AS SELECT count(*) AS n FROM fs",
		"BEGIN", "INSERT INTO fa VALUES (1)", "INSERT INTO fb VALUES (1)", "COMMIT",
		"INSERT INTO fs VALUES (7)", "FLUSH")
	wantRow(t, conn, "SELECT n FROM fs_n", "1")

	// Find the transaction and its data as streamdb's own NATS user can.
	nc, js := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, time.Minute)
	txns, err := js.Stream(ctx, "streamdb_txn")
	if err != nil {
		t.Fatal(err)
	}
	info, err := txns.Info(ctx, jetstream.WithSubjectFilter("streamdb.txn.>"))
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for subj := range info.State.Subjects {
		if rest, ok := strings.CutPrefix(subj, "streamdb.txn."); ok && strings.HasSuffix(rest, ".data") {
			id = strings.TrimSuffix(rest, ".data")
		}
	}
	if id == "" {
		t.Fatalf("no transaction data in streamdb_txn: %v", info.State.Subjects)
	}
	data, err := txns.GetLastMsgForSubject(ctx, "streamdb.txn."+id+".data")
	if err != nil {
		t.Fatal(err)
	}
	forged := nats.NewMsg("forge.events")
	forged.Header.Set("Streamdb-Txn", id)
	forged.Data = []byte(fmt.Sprintf(`{"txn":%q,"data":[[%d,%d]]}`, id, data.Sequence, data.Sequence))
	if err := nc.PublishMsg(forged); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "forge.events", []byte(`{"id": 8}`)); err != nil {
		t.Fatal(err)
	}
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n FROM fs_n", "2")
	wantRow(t, conn, "SELECT count(*) FROM fs WHERE id = 1", "0")
}

// TestTxnRecordsRemoved checks that the transaction stream does not grow
// for good: once the purges after checkpoints have removed the references
// of transactions over several tables, their records go too, and the
// tables still hold every row. Checkpoints are taken by hand only, so no
// purge runs before the 20 commits are counted.
func TestTxnRecordsRemoved(t *testing.T) {
	srv := startServer(t, testutil.ServerOptions{ConfigFile: writeConfig(t, "execution.checkpointing.interval=1h")})
	conn := srv.Conn(t)
	testutil.MustExec(t, conn,
		"CREATE TABLE ra (id BIGINT PRIMARY KEY)", "CREATE TABLE rb (id BIGINT PRIMARY KEY)",
		"CREATE MATERIALIZED VIEW rj AS SELECT count(*) AS n FROM ra JOIN rb USING (id)")
	for i := range 20 {
		testutil.MustExec(t, conn, "BEGIN", fmt.Sprintf("INSERT INTO ra VALUES (%d)", i), fmt.Sprintf("INSERT INTO rb VALUES (%d)", i), "COMMIT")
	}
	_, js := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, 2*time.Minute)
	intents := func() int {
		s, err := js.Stream(ctx, "streamdb_txn")
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter("streamdb.txn.*.intent"))
		if err != nil {
			t.Fatal(err)
		}
		return len(info.State.Subjects)
	}
	if n := intents(); n != 20 {
		t.Fatalf("%d transactions in streamdb_txn after 20 commits over two tables, want 20", n)
	}
	testutil.Poll(t, time.Minute, "the purges to remove the transactions", func() error {
		testutil.MustExec(t, conn, "INSERT INTO ra VALUES (1000 + (random() * 1000000)::bigint)", "CHECKPOINT")
		if n := intents(); n > 0 {
			return fmt.Errorf("%d transactions left", n)
		}
		return nil
	})
	testutil.MustExec(t, conn, "FLUSH")
	wantRow(t, conn, "SELECT n FROM rj", "20")
	srv.Restart(t)
	conn = srv.Conn(t)
	wantRow(t, conn, "SELECT count(*) FROM rb", "20")
	wantRow(t, conn, "SELECT n FROM rj", "20")
}
