package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/tests/testutil"
)

// wantSubRefused subscribes to subject and expects NATS to refuse it.
func (c *natsClient) wantSubRefused(t *testing.T, subject string) {
	t.Helper()
	sub, err := c.nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	c.nc.Flush()
	select {
	case err := <-c.errs:
		if !strings.Contains(err.Error(), "Permissions Violation for Subscription to \""+subject+"\"") {
			t.Fatalf("subscribe to %s: %v, want a permissions violation", subject, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("NATS let a client subscribe to %s", subject)
	}
}

// wantReadRefused expects reading a JetStream stream's messages (GET,
// consumers) to be refused with a permissions violation.
func (c *natsClient) wantReadRefused(t *testing.T, stream string) {
	t.Helper()
	s, err := c.js.Stream(testutil.Context(t, 30*time.Second), stream)
	if err != nil {
		t.Fatalf("stream %s's info: %v", stream, err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s on %s: answered", what, stream)
			return
		}
		select {
		case err := <-c.errs:
			if !strings.Contains(err.Error(), "Permissions Violation for Publish to \"$JS.API.") {
				t.Errorf("%s on %s: %v, want a permissions violation", what, stream, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s on %s: not refused", what, stream)
		}
	}
	// A refused request is never answered; the refusal arrives on its own.
	quick := func() context.Context { return testutil.Context(t, 300*time.Millisecond) }
	_, err = s.GetMsg(quick(), 1)
	refused("message get", err)
	_, err = s.OrderedConsumer(quick(), jetstream.OrderedConsumerConfig{})
	refused("ordered consumer", err)
	_, err = s.CreateOrUpdateConsumer(quick(), jetstream.ConsumerConfig{Durable: "spy"})
	refused("durable consumer", err)
}

// TestNATSReadsRefused: a NATS client without credentials (a producer)
// still publishes events to a stream's subject and a view counts them,
// but cannot subscribe to a table's subject (default or custom), to the
// transactions' subjects or to `>`, and cannot read a table's JetStream
// stream or streamdb_txn (message GET, consumers); neither can the
// producer user with its password. The reader user, with the password in
// the data directory, reads a sink's subject, and is refused tables'
// subjects and publishing.
func TestNATSReadsRefused(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		"CREATE TABLE secret (id BIGINT PRIMARY KEY, ssn VARCHAR)",
		"CREATE TABLE secret2 (id BIGINT PRIMARY KEY, ssn VARCHAR) WITH (subject = 'auth.secret2')",
		"CREATE STREAM deposits (id BIGINT, amount BIGINT) WITH (subject = 'auth.deposits')",
		"CREATE MATERIALIZED VIEW deposited AS SELECT count(*) AS n, sum(amount) AS total FROM deposits",
		"CREATE SINK deposited_out FROM deposited INTO 'auth.deposited'",
		"INSERT INTO secret VALUES (1, '111-11-1111')",
		"BEGIN",
		"INSERT INTO secret VALUES (2, '222-22-2222')",
		"INSERT INTO secret2 VALUES (2, '222-22-2222')",
		"COMMIT")
	wantRows(t, conn, "SELECT id, ssn FROM secret2", "2 222-22-2222")
	_, admin := testutil.JetStream(t, srv.NATSURL())
	ctx := testutil.Context(t, 2*time.Minute)
	streamOf := func(subject string) string {
		name, err := admin.StreamNameBySubject(ctx, subject)
		if err != nil {
			t.Fatal(err)
		}
		return name
	}
	secretJS, secret2JS := streamOf("streamdb.table.secret"), streamOf("auth.secret2")
	if s, err := admin.Stream(ctx, broker.TxnStream); err != nil {
		t.Fatal(err)
	} else if info, err := s.Info(ctx); err != nil || info.State.Msgs == 0 {
		t.Fatalf("%s holds no transaction (%v): the test needs one", broker.TxnStream, err)
	}

	anon, err := dialNATS(t, plainNATSURL(srv.NATSPort))
	if err != nil {
		t.Fatal(err)
	}
	prod, err := dialNATS(t, plainNATSURL(srv.NATSPort), nats.UserInfo(broker.ProducerUser, producerPassword(t, srv)))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range []*natsClient{anon, prod} {
		if _, err := p.js.Publish(ctx, "auth.deposits", []byte(`{"id":1,"amount":10}`)); err != nil {
			t.Fatalf("producer %d publish with ack to a stream's subject: %v", i, err)
		}
		for _, subj := range []string{">", "streamdb.table.secret", "auth.secret2", "streamdb.txn.>", "auth.deposited"} {
			p.wantSubRefused(t, subj)
		}
		for _, s := range []string{secretJS, secret2JS, broker.TxnStream} {
			p.wantReadRefused(t, s)
		}
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT n, total FROM deposited", "2 20")

	pw, err := os.ReadFile(filepath.Join(srv.DataDir, broker.ReaderPasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := dialNATS(t, plainNATSURL(srv.NATSPort), nats.UserInfo(broker.ReaderUser, strings.TrimSpace(string(pw))))
	if err != nil {
		t.Fatalf("reader with its password: %v", err)
	}
	sub, err := reader.nc.SubscribeSync("auth.deposited")
	if err != nil {
		t.Fatal(err)
	}
	reader.nc.Flush()
	if _, err := prod.js.Publish(ctx, "auth.deposits", []byte(`{"id":3,"amount":5}`)); err != nil {
		t.Fatal(err)
	}
	flush(t, conn)
	exec(t, conn, "CHECKPOINT")
	deadline := time.Now().Add(time.Minute)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("the reader got no sink message with the new total: %v", err)
		}
		if strings.Contains(string(m.Data), `"total":25`) {
			break
		}
	}
	reader.wantSubRefused(t, "streamdb.table.secret")
	reader.wantSubRefused(t, "auth.secret2")
	reader.wantSubRefused(t, "streamdb.txn.>")
	reader.wantRefused(t, "auth.deposits", `{"id":4,"amount":1}`)
	reader.wantReadRefused(t, secretJS)
	reader.wantReadRefused(t, broker.TxnStream)
}

// externalNATSConf is README's sample configuration of an external NATS
// server for streamdb (passwords filled in).
const externalNATSConf = `
authorization { users = [
  { user: streamdb, password: "s-pw" }
  { user: producer, password: "p-pw", permissions: {
      publish:   { deny: ["streamdb.table.>", "streamdb.txn.>", "streamdb.inbox.>", "$JS.>", "$KV.>", "$O.>", "$SYS.>"] }
      subscribe: { allow: ["_INBOX.>"] } } }
  { user: reader, password: "r-pw", permissions: {
      publish:   { allow: ["$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST", "$JS.API.STREAM.INFO.*"] }
      subscribe: { deny: ["streamdb.table.>", "streamdb.txn.>", "streamdb.inbox.>", "$JS.>", "$KV.>", "$O.>", "$SYS.>"] } } }
] }
`

// startConfiguredNATS runs a NATS server configured with
// externalNATSConf and returns its URL without credentials and with
// streamdb's.
func startConfiguredNATS(t *testing.T) (plain, streamdb string) {
	t.Helper()
	conf := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(conf, []byte(externalNATSConf), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, err := natsserver.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("README's NATS configuration: %v", err)
	}
	ns := testutil.StartNATSServerWith(t, func(o *natsserver.Options) { o.Users = parsed.Users })
	u, err := url.Parse(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	plain = u.String()
	u.User = url.UserPassword("streamdb", "s-pw")
	return plain, u.String()
}

// TestExternalNATSPermissions: on an external NATS server configured as
// README says, streamdb works as user streamdb, a producer's events reach
// a view, and the producer, which may subscribe to _INBOX.> for its acks,
// sees none of streamdb's replies there (consumer deliveries of a table's
// changelog): streamdb's replies arrive under its own inbox prefix.
func TestExternalNATSPermissions(t *testing.T) {
	plain, streamdbURL := startConfiguredNATS(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: streamdbURL})
	conn := srv.Conn(t)

	prod, err := dialNATS(t, plain, nats.UserInfo("producer", "p-pw"))
	if err != nil {
		t.Fatal(err)
	}
	spy, err := prod.nc.SubscribeSync("_INBOX.>")
	if err != nil {
		t.Fatal(err)
	}
	prod.nc.Flush()
	exec(t, conn,
		"CREATE TABLE secret (id BIGINT PRIMARY KEY, ssn VARCHAR)",
		"INSERT INTO secret VALUES (1, '111-11-1111')",
		"CREATE MATERIALIZED VIEW ssns AS SELECT id, ssn FROM secret",
		"CREATE STREAM deposits (id BIGINT, amount BIGINT) WITH (subject = 'auth.deposits')",
		"CREATE MATERIALIZED VIEW deposited AS SELECT count(*) AS n FROM deposits",
		"INSERT INTO secret VALUES (2, '222-22-2222')")
	ctx := testutil.Context(t, time.Minute)
	if _, err := prod.js.Publish(ctx, "auth.deposits", []byte(`{"id":1,"amount":10}`)); err != nil {
		t.Fatalf("producer publish with ack: %v", err)
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT n FROM deposited", "1")
	wantRows(t, conn, "SELECT id, ssn FROM ssns ORDER BY id", "1 111-11-1111", "2 222-22-2222")
	prod.wantSubRefused(t, "streamdb.table.secret")
	prod.wantSubRefused(t, "streamdb.inbox.>")
	for {
		m, err := spy.NextMsg(500 * time.Millisecond)
		if err != nil {
			break
		}
		if strings.Contains(string(m.Data), "-11-1111") || strings.Contains(string(m.Data), "-22-2222") {
			t.Fatalf("a producer read a table's row on %s: %s", m.Subject, m.Data)
		}
	}
}

// TestExternalNATSPermissionsHA: a server of an HA group keeps its lease
// and the group's users (with their SCRAM verifiers) in key-value buckets
// on the external NATS; a producer subscribed to _INBOX.> sees none of
// their reads.
func TestExternalNATSPermissionsHA(t *testing.T) {
	plain, streamdbURL := startConfiguredNATS(t)
	prod, err := dialNATS(t, plain, nats.UserInfo("producer", "p-pw"))
	if err != nil {
		t.Fatal(err)
	}
	spy, err := prod.nc.SubscribeSync("_INBOX.>")
	if err != nil {
		t.Fatal(err)
	}
	prod.nc.Flush()
	srv := testutil.StartServer(t, testutil.ServerOptions{NATSURL: streamdbURL, Standby: true,
		Args: []string{"--ha-group", "g", "--ha-lease-ttl", "3s", "--ha-renew-interval", "500ms"}})
	active := func() {
		testutil.Poll(t, time.Minute, "the group's only server to be active", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := pgx.Connect(ctx, srv.DSN())
			if err != nil {
				return err
			}
			defer c.Close(ctx)
			_, err = c.Exec(ctx, "SELECT 1")
			return err
		})
	}
	active()
	conn := srv.Conn(t)
	exec(t, conn, "CREATE USER alice PASSWORD 'alice-pw'")
	conn.Close(testutil.Context(t, 10*time.Second))
	srv.Restart(t)
	active()
	conn = srv.Conn(t)
	wantRows(t, conn, "SELECT rolname FROM pg_roles WHERE rolname = 'alice'", "alice")
	for {
		m, err := spy.NextMsg(500 * time.Millisecond)
		if err != nil {
			break
		}
		if strings.Contains(string(m.Data), "alice") || strings.Contains(string(m.Data), srv.Addr) {
			t.Fatalf("a producer read the HA group's records on %s: %.300q", m.Subject, m.Data)
		}
	}
}
