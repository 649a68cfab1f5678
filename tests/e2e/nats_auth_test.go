package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/tests/testutil"
)

// natsClient is an outside connection to the embedded NATS server that
// collects what the server refuses (permission violations arrive
// asynchronously).
type natsClient struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	errs chan error
}

func dialNATS(t *testing.T, url string, opts ...nats.Option) (*natsClient, error) {
	t.Helper()
	c := &natsClient{errs: make(chan error, 100)}
	opts = append(opts, nats.MaxReconnects(0), nats.Timeout(10*time.Second),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			select {
			case c.errs <- err:
			default:
			}
		}))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(nc.Close)
	c.nc = nc
	if c.js, err = jetstream.New(nc); err != nil {
		t.Fatal(err)
	}
	return c, nil
}

// wantRefused publishes data to subject and expects NATS to refuse it.
func (c *natsClient) wantRefused(t *testing.T, subject, data string) {
	t.Helper()
	if err := c.nc.Publish(subject, []byte(data)); err != nil {
		t.Fatal(err)
	}
	c.nc.Flush()
	select {
	case err := <-c.errs:
		if !strings.Contains(err.Error(), "Permissions Violation for Publish to \""+subject+"\"") {
			t.Fatalf("publish to %s: %v, want a permissions violation", subject, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("NATS accepted a producer's publish to %s", subject)
	}
}

// plainNATSURL is the embedded server's address without credentials.
func plainNATSURL(port int) string { return fmt.Sprintf("nats://127.0.0.1:%d", port) }

func producerPassword(t *testing.T, srv *testutil.Server) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(srv.DataDir, broker.ProducerPasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(srv.DataDir, broker.ProducerPasswordFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("producer password file: mode %v (%v), want 0600", st.Mode().Perm(), err)
	}
	return strings.TrimSpace(string(data))
}

// TestNATSForgedTableWritesRefused: a producer (here without credentials,
// on the default loopback address) can publish to a stream's subject and
// views see it, but a forged change published to a table's subject
// (default or custom) and a purge, message delete, update or delete of a
// table's JetStream stream are refused by NATS with a permissions
// violation, and the table keeps its rows, also after a restart. The
// producer user's generated password works the same.
func TestNATSForgedTableWritesRefused(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE acct (id BIGINT PRIMARY KEY, owner VARCHAR)",
		"CREATE TABLE acct2 (id BIGINT PRIMARY KEY, owner VARCHAR) WITH (subject = 'auth.acct2')",
		"CREATE STREAM deposits (id BIGINT, amount BIGINT) WITH (subject = 'auth.deposits')",
		"CREATE MATERIALIZED VIEW owners AS SELECT id, owner FROM acct",
		"CREATE MATERIALIZED VIEW deposited AS SELECT count(*) AS n, sum(amount) AS total FROM deposits",
		"INSERT INTO acct VALUES (1, 'ann'), (2, 'bob')",
		"INSERT INTO acct2 VALUES (1, 'ann')")
	_, admin := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, 2*time.Minute)
	streamOf := func(subject string) (string, uint64) {
		name, err := admin.StreamNameBySubject(ctx, subject)
		if err != nil {
			t.Fatal(err)
		}
		s, err := admin.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The last sequence, not the message count: the server purges a
		// table's changelog below what checkpoints hold, but a forged
		// write would have to raise the last sequence.
		return name, info.State.LastSeq
	}
	acctJS, acctLast := streamOf("streamdb.table.acct")
	acct2JS, acct2Last := streamOf("auth.acct2")

	forged := `[{"op":"+","row":{"id":1,"owner":"mallory"}}]`
	check := func(p *natsClient) {
		t.Helper()
		p.wantRefused(t, "streamdb.table.acct", forged)
		p.wantRefused(t, "auth.acct2", forged)
		for _, api := range []string{"STREAM.PURGE.", "STREAM.DELETE.", "STREAM.MSG.DELETE.", "STREAM.UPDATE."} {
			p.wantRefused(t, "$JS.API."+api+acctJS, `{}`)
			p.wantRefused(t, "$JS.API."+api+acct2JS, `{}`)
		}
		// The JetStream client's purge gets no answer either.
		if s, err := p.js.Stream(ctx, acctJS); err != nil {
			t.Errorf("a producer cannot read the info of a table's stream: %v", err)
		} else {
			pctx := testutil.Context(t, 2*time.Second)
			if err := s.Purge(pctx); err == nil {
				t.Error("a producer purged a table's JetStream stream")
			}
		}
		// Nothing changed: the tables, their views and their streams.
		wantRows(t, conn, "SELECT id, owner FROM acct ORDER BY id", "1 ann", "2 bob")
		wantRows(t, conn, "SELECT id, owner FROM owners ORDER BY id", "1 ann", "2 bob")
		wantRows(t, conn, "SELECT id, owner FROM acct2", "1 ann")
		if _, n := streamOf("streamdb.table.acct"); n != acctLast {
			t.Errorf("table acct's stream ends at sequence %d, want %d", n, acctLast)
		}
		if _, n := streamOf("auth.acct2"); n != acct2Last {
			t.Errorf("table acct2's stream ends at sequence %d, want %d", n, acct2Last)
		}
	}

	anon, err := dialNATS(t, plainNATSURL(srv.NATSPort))
	if err != nil {
		t.Fatalf("a producer without credentials on loopback: %v", err)
	}
	if _, err := anon.js.Publish(ctx, "auth.deposits", []byte(`{"id":1,"amount":10}`)); err != nil {
		t.Fatalf("producer publish with ack to a stream's subject: %v", err)
	}
	check(anon)

	prod, err := dialNATS(t, plainNATSURL(srv.NATSPort), nats.UserInfo(broker.ProducerUser, producerPassword(t, srv)))
	if err != nil {
		t.Fatalf("producer with its password: %v", err)
	}
	if _, err := prod.js.Publish(ctx, "auth.deposits", []byte(`{"id":2,"amount":5}`)); err != nil {
		t.Fatal(err)
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT n, total FROM deposited", "2 15")
	check(prod)

	// streamdb itself still writes its tables.
	exec(t, conn, "UPDATE acct SET owner = 'bo' WHERE id = 2", "DELETE FROM acct2 WHERE id = 1")
	wantRows(t, conn, "SELECT id, owner FROM owners ORDER BY id", "1 ann", "2 bo")
	wantRows(t, conn, "SELECT count(*) FROM acct2", "0")
	acctLast++
	acct2Last++

	// After a restart the custom subject is still streamdb's alone.
	conn.Close(ctx)
	srv.Restart(t)
	conn = srv.Conn(t)
	_, admin = testutil.JetStream(t, srv.NATSURL())
	anon, err = dialNATS(t, plainNATSURL(srv.NATSPort))
	if err != nil {
		t.Fatal(err)
	}
	anon.wantRefused(t, "auth.acct2", forged)
	anon.wantRefused(t, "streamdb.table.acct", forged)
	wantRows(t, conn, "SELECT id, owner FROM acct ORDER BY id", "1 ann", "2 bo")
	if strings.Contains(srv.Logs(), producerPassword(t, srv)) {
		t.Error("the server's log shows the producer's password")
	}
}

// TestNATSCredentialsRequired: with a producer password configured, or
// listening beyond loopback, a connection without credentials is refused;
// the producer logs in with its password, publishes to a stream and views
// see it, and still cannot write a table.
func TestNATSCredentialsRequired(t *testing.T) {
	t.Run("configured password", func(t *testing.T) {
		const pw = "pr0ducer-secret"
		srv := testutil.StartServer(t, testutil.ServerOptions{Env: []string{"STREAMDB_NATS_PRODUCER_PASSWORD=" + pw}})
		credentialsRequired(t, srv, srv.NATSPort, pw)
		if _, err := os.Stat(filepath.Join(srv.DataDir, broker.ProducerPasswordFile)); err == nil {
			t.Error("a producer password file was written although the password is configured")
		}
		if strings.Contains(srv.Logs(), pw) {
			t.Error("the server's log shows the producer's password")
		}
	})
	t.Run("all interfaces", func(t *testing.T) {
		port := testutil.FreePort(t)
		srv := testutil.StartServer(t, testutil.ServerOptions{Args: []string{"--nats-listen", fmt.Sprintf("0.0.0.0:%d", port)}})
		credentialsRequired(t, srv, port, producerPassword(t, srv))
	})
}

func credentialsRequired(t *testing.T, srv *testutil.Server, port int, password string) {
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE acct (id BIGINT PRIMARY KEY, owner VARCHAR)",
		"CREATE STREAM deposits (id BIGINT, amount BIGINT) WITH (subject = 'auth.deposits')",
		"CREATE MATERIALIZED VIEW deposited AS SELECT count(*) AS n, sum(amount) AS total FROM deposits",
		"INSERT INTO acct VALUES (1, 'ann')")
	if _, err := dialNATS(t, plainNATSURL(port)); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		t.Fatalf("connect without credentials: %v, want an authorization violation", err)
	}
	if _, err := dialNATS(t, plainNATSURL(port), nats.UserInfo(broker.ProducerUser, password+"x")); err == nil {
		t.Fatal("a wrong producer password was accepted")
	}
	prod, err := dialNATS(t, plainNATSURL(port), nats.UserInfo(broker.ProducerUser, password))
	if err != nil {
		t.Fatalf("producer with its password: %v", err)
	}
	ctx := testutil.Context(t, time.Minute)
	if _, err := prod.js.Publish(ctx, "auth.deposits", []byte(`{"id":1,"amount":7}`)); err != nil {
		t.Fatal(err)
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT n, total FROM deposited", "1 7")
	prod.wantRefused(t, "streamdb.table.acct", `[{"op":"+","row":{"id":1,"owner":"mallory"}}]`)
	wantRows(t, conn, "SELECT id, owner FROM acct", "1 ann")
}
