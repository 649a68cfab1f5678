// Package broker connects streamdb to NATS JetStream: it starts the
// embedded server when no external one is named, and creates or binds the
// JetStream streams that hold each SQL stream's subject.
package broker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Broker is a connection to JetStream, plus the embedded server when
// streamdb runs one.
type Broker struct {
	NC       *nats.Conn
	JS       jetstream.JetStream
	embedded *server.Server
	URL      string

	// syncer fsyncs the embedded server's streams for synchronous commit
	// (sync.go); nil with an external server.
	syncer *syncer
	// remoteSyncAlways: the external server said it fsyncs every write.
	remoteSyncAlways bool
}

// StartEmbedded runs a NATS server with JetStream in this process, listening
// for outside producers on listen (host:port), storing under storeDir.
func StartEmbedded(listen, storeDir string) (*Broker, error) {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: bad port", listen)
	}
	opts := &server.Options{
		Host:      host,
		Port:      port,
		JetStream: true,
		StoreDir:  storeDir,
		NoSigs:    true,
		NoLog:     true,
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS did not start listening on %s (is the port in use? choose another with --nats-listen)", listen)
	}
	// Connect over loopback TCP, not in-process: nats.go's in-process
	// connection is a net.Pipe, whose every write waits for the reader, so
	// the server's writer and the client's reader take turns instead of
	// running side by side. Measured on the Nexmark backlog (2 cores):
	// catch-up 5-12% faster over TCP, with less CPU.
	nc, err := nats.Connect(ns.ClientURL(), nats.MaxReconnects(-1))
	if err != nil {
		ns.Shutdown()
		return nil, fmt.Errorf("connect to embedded NATS: %w", err)
	}
	b, err := fromConn(nc)
	if err != nil {
		ns.Shutdown()
		return nil, err
	}
	b.embedded = ns
	b.URL = ns.ClientURL()
	b.enableDurable(ns)
	return b, nil
}

// Connect uses an existing NATS server or cluster.
func Connect(url string) (*Broker, error) {
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.RetryOnFailedConnect(false))
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	b, err := fromConn(nc)
	if err != nil {
		return nil, err
	}
	b.URL = url
	b.remoteSyncAlways = probeRemoteSync(nc)
	return b, nil
}

func fromConn(nc *nats.Conn) (*Broker, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return &Broker{NC: nc, JS: js}, nil
}

// Close drains the connection and stops the embedded server.
func (b *Broker) Close() {
	b.NC.Close()
	if b.embedded != nil {
		b.embedded.Shutdown()
		b.embedded.WaitForShutdown()
	}
}

// EnsureStream returns the JetStream stream that holds subject, creating one
// named after the SQL stream when none does.
func (b *Broker) EnsureStream(ctx context.Context, sqlName, subject string) (string, error) {
	name, err := b.JS.StreamNameBySubject(ctx, subject)
	if err == nil {
		return name, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", fmt.Errorf("look up JetStream stream for subject %q: %w", subject, err)
	}
	base := "streamdb_" + sanitize(sqlName)
	name = base
	for i := 2; ; i++ {
		_, err = b.JS.CreateStream(ctx, jetstream.StreamConfig{
			Name:     name,
			Subjects: []string{subject},
			Storage:  jetstream.FileStorage,
		})
		if err == nil {
			return name, nil
		}
		// The name may be held by the stream of a dropped SQL stream of the
		// same name on another subject (its input is kept): take the next.
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) || i > 100 {
			return "", fmt.Errorf("create JetStream stream %s for subject %q: %w", name, subject, err)
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
}

// LastSeq returns the sequence of the newest message in the stream.
func (b *Broker) LastSeq(ctx context.Context, stream string) (uint64, error) {
	st, err := b.state(ctx, stream)
	return st.LastSeq, err
}

// FirstSeq returns the oldest sequence the stream still retains.
func (b *Broker) FirstSeq(ctx context.Context, stream string) (uint64, error) {
	st, err := b.state(ctx, stream)
	return st.FirstSeq, err
}

func (b *Broker) state(ctx context.Context, stream string) (jetstream.StreamState, error) {
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return jetstream.StreamState{}, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return jetstream.StreamState{}, err
	}
	return info.State, nil
}

// sanitize makes a JetStream stream name from a SQL name (no dots,
// spaces, wildcards).
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '.', ' ', '*', '>', '/', '\\':
			return '_'
		}
		return r
	}, s)
}

// LastSeqForSubject returns the stream sequence of the newest message on
// subject, or 0 when there is none.
func (b *Broker) LastSeqForSubject(ctx context.Context, stream, subject string) (uint64, error) {
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return 0, err
	}
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return m.Sequence, nil
}

// SeqAtTime returns the sequence of the first message on subject stored at
// or after t (the last sequence + 1 when there is none).
func (b *Broker) SeqAtTime(ctx context.Context, stream, subject string, t time.Time) (uint64, error) {
	cons, err := b.JS.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   &t,
	})
	if err != nil {
		return 0, err
	}
	batch, err := cons.FetchNoWait(1)
	if err != nil {
		return 0, err
	}
	for m := range batch.Messages() {
		meta, err := m.Metadata()
		if err != nil {
			return 0, err
		}
		return meta.Sequence.Stream, nil
	}
	last, err := b.LastSeq(ctx, stream)
	return last + 1, err
}
