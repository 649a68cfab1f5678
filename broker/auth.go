package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"streamdb/storage"
)

// Users of the embedded NATS server. streamdb's own connection logs in as
// ServerUser, which may do everything. Outside producers log in as
// ProducerUser, which may publish to any subject but a table's changelog,
// a transaction's records or streamdb's inbox, and reads nothing: it may
// not subscribe beyond its own replies nor read JetStream streams'
// messages. Readers of sinks (and of streams' input) log in as ReaderUser,
// which may subscribe to any subject but those and publishes only requests
// that describe streams.
const (
	ServerUser   = "streamdb"
	ProducerUser = "producer"
	ReaderUser   = "reader"

	// ServerPasswordFile, ProducerPasswordFile and ReaderPasswordFile, in
	// the data directory (mode 0600), keep the users' generated passwords
	// across restarts. The producer's is written only when no password is
	// configured.
	ServerPasswordFile   = "nats-streamdb.password"
	ProducerPasswordFile = "nats-producer.password"
	ReaderPasswordFile   = "nats-reader.password"

	// InboxPrefix is where replies to streamdb's own connection arrive
	// (JetStream API answers, publish acks, consumer deliveries): producers
	// may neither publish nor subscribe there, so they can neither forge an
	// acknowledgement or a table change to streamdb nor read its traffic.
	InboxPrefix = "streamdb.inbox"

	// TableSubjectPrefix is where tables' changelogs live by default.
	TableSubjectPrefix = "streamdb.table."

	// protectedFile, in the JetStream store directory, lists the subjects
	// of tables outside TableSubjectPrefix, so that producers are denied
	// them from the first moment the server listens.
	protectedFile = "streamdb-table-subjects.json"
)

// internalSubjects hold what only streamdb may read or write: tables'
// default subjects, transactions' records (table commit data), streamdb's
// inbox, the cluster's control log (cluster/control: forged records would
// steer every server) and the subjects under which JetStream keeps
// key-value buckets and object stores (the HA lease, checkpoints).
var internalSubjects = []string{
	TableSubjectPrefix + ">",
	txnPrefix + ">",
	InboxPrefix + ".>",
	"$KV.>",
	"$O.>",
	"$SYS.>",
	"$SDB.>",
}

// producerDenyPublish are the subjects a producer may never publish to:
// the internal subjects and every JetStream API but those that describe
// streams (INFO, NAMES, LIST: a producer may find its stream and watch it
// grow). Denied are the APIs that create, change or remove a stream or a
// consumer (creating a stream could republish into a table's subject;
// purging or deleting a table's stream would erase its changelog), and
// every API that reads messages: message GET, direct GET, snapshots and
// consumers. Consumers are denied on every stream, not only tables': a
// push consumer delivers to any subject its creator names, and JetStream
// stores what it delivers to a table's subject as a change of that table.
// Acks and flow control replies to consumers are denied too.
var producerDenyPublish = append(slices.Clone(internalSubjects),
	"$JS.API.STREAM.CREATE.>",
	"$JS.API.STREAM.UPDATE.>",
	"$JS.API.STREAM.DELETE.>",
	"$JS.API.STREAM.PURGE.>",
	"$JS.API.STREAM.MSG.>",
	"$JS.API.STREAM.SNAPSHOT.>",
	"$JS.API.STREAM.RESTORE.>",
	"$JS.API.STREAM.PEER.>",
	"$JS.API.STREAM.LEADER.>",
	"$JS.API.STREAM.CANCEL_MOVE.>",
	"$JS.API.DIRECT.GET",
	"$JS.API.DIRECT.>",
	"$JS.API.CONSUMER.>",
	"$JS.API.ACCOUNT.>",
	"$JS.API.META.>",
	"$JS.API.SERVER.>",
	"$JS.*.API.>",
	"$JS.ACK.>",
	"$JS.FC.>",
	"$JS.SNAPSHOT.>",
)

// producerSubscribe is all a producer may subscribe to: the replies to its
// own requests (JetStream publish acks, stream INFO), under nats.go's
// default inbox prefix.
var producerSubscribe = []string{"_INBOX.>"}

// readerPublish is all a reader may publish: requests that describe
// streams. It may not create consumers (see producerDenyPublish) nor read
// messages through the JetStream API, whose requests name streams, not
// subjects, and so could not be kept off tables' streams (whose names are
// known only once they exist): it reads by subscribing.
var readerPublish = []string{
	"$JS.API.INFO",
	"$JS.API.STREAM.NAMES",
	"$JS.API.STREAM.LIST",
	"$JS.API.STREAM.INFO.*",
}

// readerDenySubscribe keeps a reader off what only streamdb may read, and
// off JetStream's own traffic (API requests, acks).
var readerDenySubscribe = append(slices.Clone(internalSubjects), "$JS.>")

// EmbeddedOptions configures StartEmbeddedWith.
type EmbeddedOptions struct {
	// Listen is the client address (host:port) for outside producers.
	Listen string
	// StoreDir holds JetStream's files.
	StoreDir string
	// CredentialsDir keeps the generated passwords (ServerPasswordFile,
	// ProducerPasswordFile, mode 0600) across restarts; "" keeps them in
	// memory for this run only.
	CredentialsDir string
	// ProducerPassword, when set, is ProducerUser's password, and every
	// connection must log in, from loopback too. When empty a password is
	// generated, and on a loopback address a connection without
	// credentials is the producer.
	ProducerPassword string
}

// auth holds the embedded server's users and the table subjects that
// producers are denied, and reloads the server's options when these change.
type auth struct {
	mu               sync.Mutex
	ns               *server.Server
	base             *server.Options
	serverPassword   string
	producerPassword string
	readerPassword   string
	anonymous        bool            // connections without credentials are the producer
	subjects         map[string]bool // tables' subjects outside TableSubjectPrefix
	file             string          // where subjects persist; "" keeps them in memory
	producerFile     string          // the generated producer password's file, if any
	readerFile       string          // the reader password's file, if any
}

func newAuth(o EmbeddedOptions, host string) (*auth, error) {
	a := &auth{subjects: map[string]bool{}}
	var err error
	if a.serverPassword, err = password(o.CredentialsDir, ServerPasswordFile); err != nil {
		return nil, err
	}
	if a.readerPassword, err = password(o.CredentialsDir, ReaderPasswordFile); err != nil {
		return nil, err
	}
	if o.CredentialsDir != "" {
		a.readerFile = filepath.Join(o.CredentialsDir, ReaderPasswordFile)
	}
	a.producerPassword = o.ProducerPassword
	if a.producerPassword == "" {
		if a.producerPassword, err = password(o.CredentialsDir, ProducerPasswordFile); err != nil {
			return nil, err
		}
		if o.CredentialsDir != "" {
			a.producerFile = filepath.Join(o.CredentialsDir, ProducerPasswordFile)
		}
		a.anonymous = IsLoopback(host)
	}
	if o.StoreDir != "" {
		a.file = filepath.Join(o.StoreDir, protectedFile)
		data, err := os.ReadFile(a.file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", a.file, err)
		default:
			var list []string
			if err := json.Unmarshal(data, &list); err != nil {
				return nil, fmt.Errorf("read %s: %w", a.file, err)
			}
			for _, s := range list {
				a.subjects[s] = true
			}
		}
	}
	return a, nil
}

// IsLoopback reports whether host (of a listen address) is reachable from
// this machine only.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// password reads name in dir, or makes a random password and writes it
// there (mode 0600) when the file does not exist. With dir "" the password
// lives in memory only.
func password(dir, name string) (string, error) {
	if dir != "" {
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err == nil {
			if pw := strings.TrimSpace(string(data)); pw != "" {
				return pw, nil
			}
			return "", fmt.Errorf("NATS password file %s is empty (delete it to have a new password made)", path)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("read NATS password file: %w", err)
		}
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	if dir != "" {
		if err := writePrivate(filepath.Join(dir, name), []byte(pw+"\n")); err != nil {
			return "", fmt.Errorf("write NATS password file: %w", err)
		}
	}
	return pw, nil
}

// writePrivate writes a file readable by its owner only, atomically and
// durably.
func writePrivate(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return storage.WriteFileSynced(path, data, 0o600)
}

// apply sets the users (and who a connection without credentials is) in
// the server's options. The caller holds a.mu or owns a.
func (a *auth) apply(o *server.Options) {
	var tables []string
	for s := range a.subjects {
		tables = append(tables, s)
	}
	slices.Sort(tables)
	o.Users = []*server.User{
		{Username: ServerUser, Password: a.serverPassword},
		{Username: ProducerUser, Password: a.producerPassword, Permissions: &server.Permissions{
			Publish: &server.SubjectPermission{Deny: slices.Concat(producerDenyPublish, tables)},
			Subscribe: &server.SubjectPermission{
				Allow: slices.Clone(producerSubscribe),
				Deny:  slices.Concat(internalSubjects, tables),
			},
		}},
		{Username: ReaderUser, Password: a.readerPassword, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Allow: slices.Clone(readerPublish)},
			Subscribe: &server.SubjectPermission{Deny: slices.Concat(readerDenySubscribe, tables)},
		}},
	}
	o.NoAuthUser = ""
	if a.anonymous {
		o.NoAuthUser = ProducerUser
	}
}

// protected reports whether producers must be denied subject explicitly
// (it is outside TableSubjectPrefix, which they are always denied).
func protected(subject string) bool {
	return subject != "" && !strings.HasPrefix(subject, TableSubjectPrefix)
}

// protect denies producers the given table subjects, at once for
// connected ones. It reports the subjects that were not denied before.
func (a *auth) protect(subjects ...string) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var added []string
	for _, s := range subjects {
		if protected(s) && !a.subjects[s] {
			a.subjects[s] = true
			added = append(added, s)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	if err := a.commit(); err != nil {
		for _, s := range added {
			delete(a.subjects, s)
		}
		return nil, err
	}
	return added, nil
}

// unprotect gives subjects back to producers (their table's stream is
// gone, or a SQL stream now reads it).
func (a *auth) unprotect(subjects ...string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	changed := false
	for _, s := range subjects {
		if a.subjects[s] {
			delete(a.subjects, s)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return a.commit()
}

// commit persists the subjects and reloads the server's users. The caller
// holds a.mu.
func (a *auth) commit() error {
	if a.file != "" {
		list := make([]string, 0, len(a.subjects))
		for s := range a.subjects {
			list = append(list, s)
		}
		slices.Sort(list)
		data, _ := json.Marshal(list)
		if err := writePrivate(a.file, data); err != nil {
			return fmt.Errorf("record table subjects: %w", err)
		}
	}
	o := a.base.Clone()
	a.apply(o)
	if err := a.ns.ReloadOptions(o); err != nil {
		return fmt.Errorf("update NATS permissions: %w", err)
	}
	return nil
}

// protectTableStreams denies producers the subjects of every JetStream
// stream created for a table (by any streamdb), at start.
func (b *Broker) protectTableStreams() error {
	if b.auth == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var subjects []string
	list := b.JS.ListStreams(ctx)
	for info := range list.Info() {
		if _, ok := info.Config.Metadata[TableMetadataKey]; ok {
			subjects = append(subjects, info.Config.Subjects...)
		}
	}
	if err := list.Err(); err != nil {
		return fmt.Errorf("list JetStream streams: %w", err)
	}
	_, err := b.auth.protect(subjects...)
	return err
}

// protectSubject denies producers a table's subject; it returns a function
// that undoes this when the table does not come to be.
func (b *Broker) protectSubject(subject string) (undo func(), err error) {
	if b.auth == nil {
		return func() {}, nil
	}
	added, err := b.auth.protect(subject)
	if err != nil {
		return nil, err
	}
	return func() {
		if len(added) > 0 {
			b.auth.unprotect(added...)
		}
	}, nil
}

// unprotectSubjects gives subjects back to producers.
func (b *Broker) unprotectSubjects(subjects []string) error {
	if b.auth == nil {
		return nil
	}
	return b.auth.unprotect(subjects...)
}

// ProducerAccess says, for the log, how producers connect to the embedded
// server (never the password itself).
func (b *Broker) ProducerAccess() string {
	if b.auth == nil && b.embedded != nil {
		return "without credentials: the server has no users (loopback only)"
	}
	if b.auth == nil {
		return "external NATS: its own users and permissions"
	}
	where := "the configured password"
	if b.auth.producerFile != "" {
		where = "the password in " + b.auth.producerFile
	} else if b.auth.producerPassword != "" && b.auth.file == "" {
		where = "a password made for this run"
	}
	s := "as user " + ProducerUser + " with " + where
	if b.auth.anonymous {
		s += ", or without credentials (loopback only)"
	}
	if b.auth.readerFile != "" {
		s += "; sink readers as user " + ReaderUser + " with the password in " + b.auth.readerFile
	}
	return s
}
