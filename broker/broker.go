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

	"streamdb/faults"
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
	// auth keeps tables' subjects from producers and readers; nil with an
	// external server, whose permissions streamdb does not set.
	auth *auth
	// disk keeps the embedded server off a full disk (diskguard.go); nil
	// with an external server.
	disk *diskGuard
	// writeErrs are the embedded server's streams whose store failed
	// (stream_errors.go); nil with an external server.
	writeErrs *writeErrors
	// replicas of the JetStream streams the broker creates (0: 1); set
	// before the first EnsureStream.
	replicas int
	// atomicOff: streams that refused an atomic batch (atomic.go).
	atomicOff atomicOff
	// conn mirrors NC's status for writers (conn_state.go).
	conn connState
}

// SetStreamReplicas sets the replicas of the JetStream streams the broker
// creates from now on (on a NATS cluster; a single server keeps one).
func (b *Broker) SetStreamReplicas(n int) { b.replicas = n }

// SpaceError returns a *storage.DiskFullError while the disk holding the
// embedded server's store has less than its reserve free: a write now
// would be refused (nil with an external server, which answers for
// itself).
func (b *Broker) SpaceError() error {
	if b.disk == nil {
		return nil
	}
	return b.disk.spaceError()
}

// StartEmbedded runs a NATS server with JetStream in this process without
// users: anyone who reaches it may do everything, so it listens on a
// loopback address only. For tests and benchmarks; the server uses
// StartEmbeddedWith.
func StartEmbedded(listen, storeDir string) (*Broker, error) {
	return startEmbedded(EmbeddedOptions{Listen: listen, StoreDir: storeDir}, false)
}

// StartEmbeddedWith runs a NATS server with JetStream in this process. It
// has three users (auth.go): streamdb's own connection logs in as
// ServerUser and may do everything; producers log in as ProducerUser
// (or, on a loopback address with no producer password configured,
// connect without credentials) and may publish to streams' subjects but
// not write tables' subjects, manage JetStream streams or read anything;
// readers of sinks log in as ReaderUser and may subscribe to anything but
// tables' subjects and streamdb's internal ones.
func StartEmbeddedWith(eo EmbeddedOptions) (*Broker, error) {
	return startEmbedded(eo, true)
}

func startEmbedded(eo EmbeddedOptions, users bool) (*Broker, error) {
	listen := eo.Listen
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("--nats-listen %q: bad port", listen)
	}
	var a *auth
	if users {
		if a, err = newAuth(eo, host); err != nil {
			return nil, err
		}
	} else if !IsLoopback(host) {
		return nil, fmt.Errorf("NATS without users listens on loopback only, not %q", listen)
	}
	opts := &server.Options{
		Host:      host,
		Port:      port,
		JetStream: true,
		StoreDir:  eo.StoreDir,
		NoSigs:    true,
		NoLog:     true,
		// Left unset, JetStream's storage limit is three quarters of the
		// space free when it starts and stays there: started on a nearly
		// full disk it would refuse writes after space is freed, until
		// the next restart. The disk guard (diskguard.go) keeps JetStream
		// off a full disk instead.
		JetStreamMaxStore: 1 << 60,
		MaxPending:        embeddedMaxPending,
		MaxPayload:        int32(embeddedMaxPayload),
	}
	connOpts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectBufSize(-1)}
	if a != nil {
		a.apply(opts)
		connOpts = append(connOpts, nats.UserInfo(ServerUser, a.serverPassword), nats.CustomInboxPrefix(InboxPrefix))
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	if a != nil {
		a.ns, a.base = ns, opts
	}
	writeErrs := &writeErrors{}
	if err := startListening(ns, listen, writeErrs); err != nil {
		return nil, err
	}
	// Connect over loopback TCP, not in-process: nats.go's in-process
	// connection is a net.Pipe, whose every write waits for the reader, so
	// the server's writer and the client's reader take turns instead of
	// running side by side. Measured on the Nexmark backlog (2 cores):
	// catch-up 5-12% faster over TCP, with less CPU.
	nc, err := nats.Connect(ns.ClientURL(), connOpts...)
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
	b.writeErrs = writeErrs
	b.disk = startDiskGuard(ns, eo.StoreDir)
	if a != nil {
		b.auth = a
	}
	b.URL = ns.ClientURL()
	b.enableDurable(ns)
	// Tables' streams made before their subjects were recorded (by an
	// older streamdb) are denied to producers from now on.
	if err := b.protectTableStreams(); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Connect uses an existing NATS server or cluster.
func Connect(url string) (*Broker, error) {
	// Publishes are not buffered while reconnecting: a write then fails at
	// once (08006) instead of being sent, unknown to its client, after the
	// error was reported.
	// Replies arrive under InboxPrefix as on the embedded server, so that
	// the external server's permissions can keep them from other users
	// (README: producers may subscribe to _INBOX.> for their acks).
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.RetryOnFailedConnect(false), nats.ReconnectBufSize(-1), nats.CustomInboxPrefix(InboxPrefix))
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
	b := &Broker{NC: nc, JS: js}
	b.conn.watch(nc)
	return b, nil
}

// Close drains the connection and stops the embedded server.
func (b *Broker) Close() {
	if b.disk != nil {
		b.disk.close()
	}
	b.NC.Close()
	if b.embedded != nil {
		b.embedded.Shutdown()
		b.embedded.WaitForShutdown()
	}
}

// EnsureStream returns the JetStream stream that holds subject, creating one
// named after the SQL stream when none does.
func (b *Broker) EnsureStream(ctx context.Context, sqlName, subject string) (string, error) {
	name, _, err := b.EnsureStreamFor(ctx, sqlName, subject, "")
	return name, err
}

// Metadata keys that mark a JetStream stream streamdb created to hold a
// table's changelog: the table's name, and the id of the server (its data
// directory) that created it. Only such a stream is ever deleted, and only
// by that server, when its table is dropped and nothing retained needs it
// any more: a stream streamdb bound to, or created for a CREATE STREAM,
// holds its producers' input, and another server's tables are its own.
const (
	TableMetadataKey = "streamdb_table"
	OwnerMetadataKey = "streamdb_owner"
)

// EnsureStreamFor is EnsureStream that also says whether it created the
// JetStream stream (false when it bound to an existing one). A non-empty
// owner marks a created stream as holding a table's changelog, made by the
// server with that id.
//
// A table's subject (non-empty owner) is denied to the embedded server's
// producers before its stream is made or bound.
func (b *Broker) EnsureStreamFor(ctx context.Context, sqlName, subject, owner string) (name string, created bool, err error) {
	if owner != "" {
		undo, err := b.protectSubject(subject)
		if err != nil {
			return "", false, err
		}
		defer func() {
			if err != nil {
				undo()
			}
		}()
	}
	if IsPattern(subject) {
		return b.ensurePatternStream(ctx, sqlName, subject)
	}
	name, err = b.JS.StreamNameBySubject(ctx, subject)
	if err == nil {
		return name, false, nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", false, fmt.Errorf("look up JetStream stream for subject %q: %w", subject, err)
	}
	var meta map[string]string
	if owner != "" {
		meta = map[string]string{TableMetadataKey: sqlName, OwnerMetadataKey: owner}
	}
	return b.createStream(ctx, sqlName, subject, meta)
}

// createStream creates a JetStream stream holding subject, named after
// the SQL object sqlName.
func (b *Broker) createStream(ctx context.Context, sqlName, subject string, meta map[string]string) (name string, created bool, err error) {
	base := "streamdb_" + sanitize(sqlName)
	name = base
	var busySince time.Time
	for i := 2; ; i++ {
		_, err = b.JS.CreateStream(ctx, jetstream.StreamConfig{
			Name:     name,
			Subjects: []string{subject},
			Storage:  jetstream.FileStorage,
			Metadata: meta,
			Replicas: max(1, b.replicas),
			// A write of several rows lands as one atomic batch
			// (PublishAtomic).
			AllowAtomicPublish: true,
		})
		if err == nil {
			return name, true, nil
		}
		if storeBusy(err) && retryUntil(ctx, &busySince) {
			i--
			continue
		}
		// The name may be held by the stream of a dropped SQL stream of the
		// same name on another subject (its input is kept): take the next.
		if !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) || i > 100 {
			return "", false, fmt.Errorf("create JetStream stream %s for subject %q: %w", name, subject, err)
		}
		name = fmt.Sprintf("%s_%d", base, i)
	}
}

// storeBusy reports whether JetStream refused to make a stream because
// it is still removing the files of a deleted stream of the same name
// (error 10049): a table created again right after its old stream was
// collected meets it, and it clears within moments.
func storeBusy(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == errCodeStreamStoreFailed
}

// errCodeStreamStoreFailed is JetStream's "error creating store for
// stream" (nats.go names no constant for it).
const errCodeStreamStoreFailed = 10049

// storeBusyRetry bounds how long createStream waits out storeBusy.
const storeBusyRetry = 10 * time.Second

// retryUntil sleeps a poll interval and reports true while storeBusyRetry
// has not passed since *since (set on the first call) and ctx is live.
func retryUntil(ctx context.Context, since *time.Time) bool {
	if since.IsZero() {
		*since = time.Now()
	}
	if time.Since(*since) > storeBusyRetry {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(50 * time.Millisecond):
		return true
	}
}

// TableOwner returns the id of the server that created the JetStream
// stream for a table, or "" when it was not created for a table or no
// longer exists.
func (b *Broker) TableOwner(ctx context.Context, stream string) (string, error) {
	s, err := b.JS.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return tableOwner(s.CachedInfo().Config), nil
}

func tableOwner(cfg jetstream.StreamConfig) string {
	if _, ok := cfg.Metadata[TableMetadataKey]; !ok {
		return ""
	}
	return cfg.Metadata[OwnerMetadataKey]
}

// OwnedTableStreams returns the JetStream streams created for tables by
// the server with id owner, with their subjects.
func (b *Broker) OwnedTableStreams(ctx context.Context, owner string) (map[string]string, error) {
	out := map[string]string{}
	list := b.JS.ListStreams(ctx)
	for info := range list.Info() {
		if tableOwner(info.Config) == owner && len(info.Config.Subjects) > 0 {
			out[info.Config.Name] = info.Config.Subjects[0]
		}
	}
	if err := list.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Disown removes the table marks from a JetStream stream (a SQL stream now
// reads it, and its input belongs to its producers from then on).
func (b *Broker) Disown(ctx context.Context, stream string) error {
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return err
	}
	cfg := s.CachedInfo().Config
	// Producers may publish to its subjects again (a table may have been
	// bound to it without marks).
	if err := b.unprotectSubjects(cfg.Subjects); err != nil {
		return err
	}
	if _, ok := cfg.Metadata[TableMetadataKey]; !ok {
		return nil
	}
	meta := map[string]string{}
	for k, v := range cfg.Metadata {
		if k != TableMetadataKey && k != OwnerMetadataKey {
			meta[k] = v
		}
	}
	cfg.Metadata = meta
	_, err = b.JS.UpdateStream(ctx, cfg)
	return err
}

// DeleteStream deletes a JetStream stream and its messages; one that is
// already gone is not an error. Its subjects are given back to producers.
func (b *Broker) DeleteStream(ctx context.Context, stream string) error {
	// The subjects are only needed to lift their protection; a lookup that
	// cannot be answered (a NATS user without STREAM.INFO rights waits for
	// its timeout) must not use up the time the delete itself needs.
	var subjects []string
	ictx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if s, err := b.JS.Stream(ictx, stream); err == nil {
		subjects = s.CachedInfo().Config.Subjects
	}
	cancel()
	err := b.JS.DeleteStream(ctx, stream)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("delete JetStream stream %s: %w", stream, err)
	}
	return b.unprotectSubjects(subjects)
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

// FirstTime returns when the oldest message the stream retains was
// stored; for an empty stream, a time after every message's.
func (b *Broker) FirstTime(ctx context.Context, stream string) (time.Time, error) {
	st, err := b.state(ctx, stream)
	if err != nil {
		return time.Time{}, err
	}
	if st.Msgs == 0 {
		return time.Now().Add(time.Hour), nil
	}
	return st.FirstTime, nil
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
	defer b.dropConsumer(stream, cons)
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

// embeddedMaxPending is the embedded server's limit on the bytes it holds
// for one client before it drops the client as a slow consumer (0: NATS's
// default, 64 MiB). Tests lower it (STREAMDB_FAULT_SIZES
// nats-max-pending), so that a read that would overrun the default with
// hundreds of megabytes overruns it with a few.
var embeddedMaxPending = faults.Size("nats-max-pending", 0)

// embeddedMaxPayload is the embedded server's largest message (0: NATS's
// default, 1 MiB). Tests lower it (STREAMDB_FAULT_SIZES nats-max-payload)
// so that a commit of a few megabytes takes as many messages as one of
// hundreds does at the default.
var embeddedMaxPayload = faults.Size("nats-max-payload", 0)
