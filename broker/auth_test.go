package broker

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// client is an outside connection to the embedded server that collects
// the asynchronous errors (permission violations) the server sends it.
type client struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	errs chan error
}

func dial(t *testing.T, url string, opts ...nats.Option) (*client, error) {
	t.Helper()
	c := &client{errs: make(chan error, 100)}
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case c.errs <- err:
		default:
		}
	}), nats.MaxReconnects(0))
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, err
	}
	t.Cleanup(nc.Close)
	c.nc = nc
	c.js, err = jetstream.New(nc)
	return c, err
}

func mustDial(t *testing.T, url string, opts ...nats.Option) *client {
	t.Helper()
	c, err := dial(t, url, opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	return c
}

// wantDenied publishes to subject and expects the server to refuse it.
func (c *client) wantDenied(t *testing.T, subject string) {
	t.Helper()
	if err := c.nc.Publish(subject, []byte(`[{"op":"+","row":{"id":1}}]`)); err != nil {
		t.Fatal(err)
	}
	c.nc.Flush()
	select {
	case err := <-c.errs:
		if !strings.Contains(err.Error(), "Permissions Violation") || !strings.Contains(err.Error(), subject) {
			t.Fatalf("publish to %s: error %v, want a permissions violation", subject, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("publish to %s was not refused", subject)
	}
}

// wantAllowed publishes to subject and expects no refusal.
func (c *client) wantAllowed(t *testing.T, subject string) {
	t.Helper()
	if err := c.nc.Publish(subject, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.errs:
		t.Fatalf("publish to %s: %v", subject, err)
	case <-time.After(300 * time.Millisecond):
	}
}

// shortCtx bounds a request the server refuses: nats.go reports a
// permissions violation asynchronously, and the request times out.
func shortCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestEmbeddedPermissions: on loopback with no producer password, a
// connection without credentials is the producer: it may publish with
// acks to a stream's subject, but not to a table's subject (default or
// custom, also after a restart) nor purge, delete or update a stream; the
// server's own connection may. Deleting a table's stream gives its custom
// subject back.
func TestEmbeddedPermissions(t *testing.T) {
	dataDir, storeDir := t.TempDir(), t.TempDir()
	b, err := StartEmbeddedWith(EmbeddedOptions{Listen: "127.0.0.1:-1", StoreDir: storeDir, CredentialsDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	for _, f := range []string{ServerPasswordFile, ProducerPasswordFile} {
		st, err := os.Stat(filepath.Join(dataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	if strings.Contains(b.URL, "@") {
		t.Errorf("broker URL %q carries credentials", b.URL)
	}
	if _, _, err := b.EnsureStreamFor(ctx, "s", "auth.s", ""); err != nil {
		t.Fatal(err)
	}
	custom, _, err := b.EnsureStreamFor(ctx, "c", "auth.custom", "me")
	if err != nil {
		t.Fatal(err)
	}
	table, _, err := b.EnsureStreamFor(ctx, "t", TableSubjectPrefix+"t", "me")
	if err != nil {
		t.Fatal(err)
	}

	anon := mustDial(t, b.URL)
	if _, err := anon.js.Publish(ctx, "auth.s", []byte(`{"x":1}`)); err != nil {
		t.Fatalf("producer publish with ack to a stream's subject: %v", err)
	}
	anon.wantDenied(t, TableSubjectPrefix+"t")
	anon.wantDenied(t, "auth.custom")
	anon.wantDenied(t, "$JS.API.STREAM.PURGE."+table)
	anon.wantDenied(t, "$JS.API.STREAM.DELETE."+custom)
	anon.wantDenied(t, "$JS.API.STREAM.MSG.DELETE."+table)
	anon.wantDenied(t, "$JS.API.STREAM.UPDATE."+table)
	anon.wantDenied(t, "$JS.API.STREAM.CREATE.other")
	anon.wantDenied(t, InboxPrefix+".x.y")
	if _, err := anon.nc.SubscribeSync(InboxPrefix + ".>"); err != nil {
		t.Fatal(err)
	}
	anon.nc.Flush()
	select {
	case err := <-anon.errs:
		if !strings.Contains(err.Error(), "Permissions Violation for Subscription") {
			t.Fatalf("subscribe to the inbox: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a producer subscribed to streamdb's inbox")
	}
	if s, err := anon.js.Stream(ctx, table); err != nil {
		t.Errorf("producer cannot read a table stream's info: %v", err)
	} else if err := s.Purge(shortCtx(t)); err == nil {
		t.Error("producer purged a table's stream")
	}

	// The server's own connection may write the table.
	if _, err := b.JS.Publish(ctx, TableSubjectPrefix+"t", []byte(`[]`)); err != nil {
		t.Fatal(err)
	}
	if last, err := b.LastSeq(ctx, table); err != nil || last != 1 {
		t.Fatalf("table stream last sequence %d (%v), want 1: only the server's message", last, err)
	}

	// A restart keeps the custom subject denied.
	b.Close()
	b, err = StartEmbeddedWith(EmbeddedOptions{Listen: "127.0.0.1:-1", StoreDir: storeDir, CredentialsDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	anon = mustDial(t, b.URL)
	anon.wantDenied(t, "auth.custom")
	// A table created while a producer is connected is denied to it at once.
	anon.wantAllowed(t, "auth.late")
	late, _, err := b.EnsureStreamFor(ctx, "late", "auth.late", "me")
	if err != nil {
		t.Fatal(err)
	}
	anon.wantDenied(t, "auth.late")
	if _, err := b.JS.Publish(ctx, "auth.late", []byte(`[]`)); err != nil {
		t.Fatalf("the server's connection after a permissions reload: %v", err)
	}
	if last, err := b.LastSeq(ctx, late); err != nil || last != 1 {
		t.Fatalf("late stream last sequence %d (%v), want 1", last, err)
	}
	// The stream of a dropped table is deleted: its subject is free again.
	if err := b.DeleteStream(ctx, custom); err != nil {
		t.Fatal(err)
	}
	anon.wantAllowed(t, "auth.custom")
	anon.wantDenied(t, TableSubjectPrefix+"t")

	// The producer's password from its file works too; a wrong one does not.
	pw, err := os.ReadFile(filepath.Join(dataDir, ProducerPasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	prod := mustDial(t, b.URL, nats.UserInfo(ProducerUser, strings.TrimSpace(string(pw))))
	prod.wantAllowed(t, "auth.s")
	prod.wantDenied(t, TableSubjectPrefix+"t")
	if _, err := dial(t, b.URL, nats.UserInfo(ProducerUser, "wrong")); err == nil {
		t.Error("a wrong producer password was accepted")
	}
}

// TestEmbeddedCredentialsRequired: beyond loopback, or with a configured
// producer password, a connection must log in.
func TestEmbeddedCredentialsRequired(t *testing.T) {
	for _, c := range []struct {
		name     string
		opts     EmbeddedOptions
		password string
	}{
		{"all interfaces", EmbeddedOptions{Listen: "0.0.0.0:-1"}, ""},
		{"configured password", EmbeddedOptions{Listen: "127.0.0.1:-1", ProducerPassword: "s3cret"}, "s3cret"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.StoreDir, c.opts.CredentialsDir = t.TempDir(), t.TempDir()
			b, err := StartEmbeddedWith(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(b.Close)
			if _, err := dial(t, b.URL); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
				t.Fatalf("connect without credentials: %v, want an authorization violation", err)
			}
			pw := c.password
			if pw == "" {
				data, err := os.ReadFile(filepath.Join(c.opts.CredentialsDir, ProducerPasswordFile))
				if err != nil {
					t.Fatal(err)
				}
				pw = strings.TrimSpace(string(data))
			} else if _, err := os.Stat(filepath.Join(c.opts.CredentialsDir, ProducerPasswordFile)); err == nil {
				t.Error("a producer password file was written although the password is configured")
			}
			prod := mustDial(t, b.URL, nats.UserInfo(ProducerUser, pw))
			prod.wantAllowed(t, "orders")
			prod.wantDenied(t, TableSubjectPrefix+"t")
		})
	}
}

// TestEmbeddedWithoutUsers: the server without users (tests, benchmarks)
// refuses to listen beyond loopback.
func TestEmbeddedWithoutUsers(t *testing.T) {
	if b, err := StartEmbedded("0.0.0.0:-1", t.TempDir()); err == nil {
		b.Close()
		t.Fatal("a NATS server without users listened on all interfaces")
	}
}

// TestEmbeddedPortTaken: an embedded server whose client port is taken
// fails at once, saying so, instead of being waited for until the start
// timeout (a test server that lost its port to another process then
// retries on new ports at once).
func TestEmbeddedPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	b, err := StartEmbedded(l.Addr().String(), t.TempDir())
	if err == nil {
		b.Close()
		t.Fatalf("the embedded server started on %s, which is taken", l.Addr())
	}
	if took := time.Since(start); took > embeddedStartTimeout/3 || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("after %v: %v; want an error naming the taken address at once", took, err)
	}
}

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "::1": true, "localhost": true, "127.0.0.2": true,
		"0.0.0.0": false, "": false, "::": false, "10.0.0.1": false, "example.com": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// wantSubDenied subscribes to subject and expects the server to refuse it.
func (c *client) wantSubDenied(t *testing.T, subject string) {
	t.Helper()
	sub, err := c.nc.SubscribeSync(subject)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	c.nc.Flush()
	select {
	case err := <-c.errs:
		if !strings.Contains(err.Error(), "Permissions Violation for Subscription") || !strings.Contains(err.Error(), subject) {
			t.Fatalf("subscribe to %s: error %v, want a permissions violation", subject, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("subscription to %s was not refused", subject)
	}
}

// wantNoRead expects every way of reading stream's messages through the
// JetStream API to be refused with a permissions violation: message GET,
// direct GET, snapshots, and creating a consumer (ordered, durable pull,
// and push).
func (c *client) wantNoRead(t *testing.T, stream string) {
	t.Helper()
	s, err := c.js.Stream(testCtx(t), stream)
	if err != nil {
		t.Fatalf("stream %s's info: %v", stream, err)
	}
	// A refused request is never answered; the refusal arrives on its own.
	quick := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
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
		case <-time.After(5 * time.Second):
			t.Errorf("%s on %s: not refused", what, stream)
		}
	}
	_, err = s.GetMsg(quick(), 1)
	refused("message get", err)
	_, err = c.nc.Request("$JS.API.DIRECT.GET."+stream, []byte(`{"seq":1}`), 300*time.Millisecond)
	refused("direct get", err)
	_, err = s.OrderedConsumer(quick(), jetstream.OrderedConsumerConfig{})
	refused("ordered consumer", err)
	_, err = s.CreateOrUpdateConsumer(quick(), jetstream.ConsumerConfig{Durable: "spy"})
	refused("durable consumer", err)
	_, err = c.nc.Request("$JS.API.CONSUMER.DURABLE.CREATE."+stream+".spy",
		[]byte(`{"stream_name":"`+stream+`","config":{"durable_name":"spy","deliver_subject":"spy.out","ack_policy":"none"}}`), 300*time.Millisecond)
	refused("push consumer", err)
	_, err = c.nc.Request("$JS.API.STREAM.SNAPSHOT."+stream, []byte(`{"deliver_subject":"spy.snap"}`), 300*time.Millisecond)
	refused("snapshot", err)
}

// TestEmbeddedReadPermissions: a producer reads nothing: it may not
// subscribe to a table's subject (default or custom), the transactions'
// subjects, a stream's subject or `>`, nor read any JetStream stream's
// messages (GET, direct GET, consumers, snapshots), a stream's either (a
// push consumer there could deliver into a table's subject), but it may
// still publish to a stream with acks and see streams' info. The reader
// may subscribe to streams' and sinks' subjects, also through `>`, and
// gets no table's or transaction's message; it may not subscribe to
// tables' subjects, publish, or read through the JetStream API.
func TestEmbeddedReadPermissions(t *testing.T) {
	dataDir, storeDir := t.TempDir(), t.TempDir()
	b, err := StartEmbeddedWith(EmbeddedOptions{Listen: "127.0.0.1:-1", StoreDir: storeDir, CredentialsDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := os.Stat(filepath.Join(dataDir, ReaderPasswordFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("reader password file: %v, %v; want mode 0600", st, err)
	}
	stream, err := b.EnsureStream(ctx, "s", "auth.s")
	if err != nil {
		t.Fatal(err)
	}
	custom, _, err := b.EnsureStreamFor(ctx, "c", "auth.custom", "me")
	if err != nil {
		t.Fatal(err)
	}
	table, _, err := b.EnsureStreamFor(ctx, "t", TableSubjectPrefix+"t", "me")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.EnsureTxnStream(ctx); err != nil {
		t.Fatal(err)
	}
	for _, subj := range []string{TableSubjectPrefix + "t", "auth.custom", TxnDataSubject("x1")} {
		if _, err := b.JS.Publish(ctx, subj, []byte(`[{"op":"+","row":{"id":1}}]`)); err != nil {
			t.Fatal(err)
		}
	}

	anon := mustDial(t, b.URL)
	if _, err := anon.js.Publish(ctx, "auth.s", []byte(`{"x":1}`)); err != nil {
		t.Fatalf("producer publish with ack to a stream's subject: %v", err)
	}
	for _, subj := range []string{TableSubjectPrefix + "t", "auth.custom", "streamdb.txn.>", TxnDataSubject("x1"), "auth.s", ">", "$KV.>"} {
		anon.wantSubDenied(t, subj)
	}
	for _, s := range []string{table, custom, TxnStream, stream} {
		anon.wantNoRead(t, s)
	}
	anon.wantDenied(t, TxnDataSubject("x2"))

	pw, err := os.ReadFile(filepath.Join(dataDir, ReaderPasswordFile))
	if err != nil {
		t.Fatal(err)
	}
	reader := mustDial(t, b.URL, nats.UserInfo(ReaderUser, strings.TrimSpace(string(pw))))
	all, err := reader.nc.SubscribeSync(">")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := reader.nc.SubscribeSync("auth.s")
	if err != nil {
		t.Fatal(err)
	}
	reader.nc.Flush()
	for _, subj := range []string{TableSubjectPrefix + "t", "auth.custom", "auth.s", TxnDataSubject("x2")} {
		if _, err := b.JS.Publish(ctx, subj, []byte(`{"x":2}`)); err != nil {
			t.Fatal(err)
		}
	}
	if m, err := sub.NextMsg(5 * time.Second); err != nil || string(m.Data) != `{"x":2}` {
		t.Fatalf("reader on a stream's subject: %v %v", m, err)
	}
	for {
		m, err := all.NextMsg(time.Second)
		if err != nil {
			break
		}
		if m.Subject != "auth.s" && !strings.HasPrefix(m.Subject, "_INBOX.") {
			t.Errorf("reader subscribed to > got a message on %s", m.Subject)
		}
	}
	for _, subj := range []string{TableSubjectPrefix + "t", "auth.custom", TxnDataSubject("x1"), InboxPrefix + ".>", "$JS.API.>"} {
		reader.wantSubDenied(t, subj)
	}
	reader.wantDenied(t, "auth.s")
	for _, s := range []string{table, TxnStream, stream} {
		reader.wantNoRead(t, s)
	}

	// A table created while the reader listens on its subject (directly
	// and through >) takes it away at once.
	early, err := reader.nc.SubscribeSync("auth.late")
	if err != nil {
		t.Fatal(err)
	}
	reader.nc.Flush()
	if _, _, err := b.EnsureStreamFor(ctx, "late", "auth.late", "me"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.JS.Publish(ctx, "auth.late", []byte(`[{"op":"+","row":{"id":3}}]`)); err != nil {
		t.Fatal(err)
	}
	if m, err := early.NextMsg(time.Second); err == nil {
		t.Errorf("the reader got a new table's change: %s", m.Data)
	}
	for {
		m, err := all.NextMsg(500 * time.Millisecond)
		if err != nil {
			break
		}
		if m.Subject == "auth.late" {
			t.Errorf("the reader subscribed to > got a new table's change")
		}
	}
	reader.wantSubDenied(t, "auth.late")
}
