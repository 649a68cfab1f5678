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
// ServerUser, which may do everything; outside producers log in as
// ProducerUser, which may publish to any subject but a table's changelog
// or streamdb's inbox, and may not manage JetStream streams.
const (
	ServerUser   = "streamdb"
	ProducerUser = "producer"

	// ServerPasswordFile and ProducerPasswordFile, in the data directory
	// (mode 0600), keep the users' generated passwords across restarts.
	// The producer's is written only when no password is configured.
	ServerPasswordFile   = "nats-streamdb.password"
	ProducerPasswordFile = "nats-producer.password"

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

// producerDenyPublish are the subjects a producer may never publish to:
// tables' default subjects, streamdb's inbox, and every JetStream API that
// creates, changes or removes a stream or a consumer (creating a stream
// could republish into a table's subject; purging or deleting a table's
// stream would erase its changelog). Reading (INFO, NAMES, LIST, message
// GET, consumers that read) and publishing with acks stay allowed.
var producerDenyPublish = []string{
	TableSubjectPrefix + ">",
	InboxPrefix + ".>",
	"$JS.API.STREAM.CREATE.>",
	"$JS.API.STREAM.UPDATE.>",
	"$JS.API.STREAM.DELETE.>",
	"$JS.API.STREAM.PURGE.>",
	"$JS.API.STREAM.MSG.DELETE.>",
	"$JS.API.STREAM.RESTORE.>",
	"$JS.API.STREAM.PEER.>",
	"$JS.API.STREAM.LEADER.>",
	"$JS.API.CONSUMER.DELETE.>",
	"$JS.API.CONSUMER.PAUSE.>",
	"$JS.API.CONSUMER.UNPIN.>",
	"$JS.API.CONSUMER.LEADER.>",
	"$JS.API.ACCOUNT.PURGE.>",
	"$JS.API.META.>",
	"$JS.API.SERVER.>",
}

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
	anonymous        bool            // connections without credentials are the producer
	subjects         map[string]bool // tables' subjects outside TableSubjectPrefix
	file             string          // where subjects persist; "" keeps them in memory
	producerFile     string          // the generated producer password's file, if any
}

func newAuth(o EmbeddedOptions, host string) (*auth, error) {
	a := &auth{subjects: map[string]bool{}}
	var err error
	if a.serverPassword, err = password(o.CredentialsDir, ServerPasswordFile); err != nil {
		return nil, err
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
	deny := slices.Clone(producerDenyPublish)
	for s := range a.subjects {
		deny = append(deny, s)
	}
	slices.Sort(deny[len(producerDenyPublish):])
	o.Users = []*server.User{
		{Username: ServerUser, Password: a.serverPassword},
		{Username: ProducerUser, Password: a.producerPassword, Permissions: &server.Permissions{
			Publish:   &server.SubjectPermission{Deny: deny},
			Subscribe: &server.SubjectPermission{Deny: []string{InboxPrefix + ".>"}},
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
	return s
}
