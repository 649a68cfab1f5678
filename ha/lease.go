// Package ha makes servers of one --ha-group share a single active role:
// a lease in a NATS key-value bucket says which server is active, the
// active one renews it, and the others wait as standbys until it expires.
//
// The lease is one key in a bucket whose entries expire (the bucket's
// TTL): the active server rewrites it every renew interval with a
// compare-and-set on the revision it last wrote, and a standby can create
// it only once the NATS server has expired it. Expiry is judged by the
// NATS server's clock alone, so no two servers' clocks are compared.
//
// The revision the holder last wrote is its fencing token. The holder
// treats its lease as valid until TTL minus one renew interval after it
// sent the last successful renewal (measured on its own monotonic clock,
// which starts before the NATS server stores the entry, so the holder
// stops before the entry can expire there). Check answers from that
// deadline without a round trip; Confirm proves the token at the NATS
// server by renewing now.
package ha

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Options configure a server's membership in a group.
type Options struct {
	// Group names the group; servers with the same group share one lease.
	Group string
	// Holder identifies this server (unique per process start).
	Holder string
	// Addr is the host:port clients reach this server's PostgreSQL
	// protocol at; standbys name it in their refusals.
	Addr string
	// TTL is how long the lease lasts without renewal (default 5s).
	TTL time.Duration
	// Renew is the time between renewals (default 1s); it must be less
	// than half the TTL.
	Renew time.Duration
	// Replicas is the bucket's replica count on a NATS cluster (0: 1).
	Replicas int
	Log      *slog.Logger
}

// Defaults of Options.
const (
	DefaultTTL   = 5 * time.Second
	DefaultRenew = time.Second
)

var groupName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate fills in defaults and checks the options.
func (o *Options) Validate() error {
	if !groupName.MatchString(o.Group) {
		return fmt.Errorf("--ha-group %q: use 1 to 64 letters, digits, '-' or '_'", o.Group)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.Renew == 0 {
		o.Renew = DefaultRenew
	}
	if o.Renew <= 0 || o.TTL < 2*o.Renew+o.Renew/2 {
		return fmt.Errorf("--ha-lease-ttl (%s) must be at least 2.5 times --ha-renew-interval (%s)", o.TTL, o.Renew)
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return nil
}

// Bucket is the key-value bucket that holds group's lease.
func Bucket(group string) string { return "streamdb_ha_" + group }

// CheckpointBucket is the object store bucket the servers of group share
// for checkpoints unless state.checkpoints.dir names another.
func CheckpointBucket(group string) string { return "streamdb_ha_" + group + "_checkpoints" }

const leaseKey = "lease"

// Holding is the lease's value: who holds it and where clients reach it.
type Holding struct {
	Holder string    `json:"holder"`
	Addr   string    `json:"addr"`
	Since  time.Time `json:"since"`
}

// ErrMismatch: the group's lease bucket was made with other settings.
var ErrMismatch = errors.New("settings differ from the group's")

// ErrLost is returned by Check and Confirm once the lease is lost (or
// was never held).
var ErrLost = errors.New("this server no longer holds the lease of its group")

// A Lease is this server's view of its group's lease.
type Lease struct {
	o     Options
	kv    jetstream.KeyValue
	value []byte

	renewMu  sync.Mutex // one renewal at a time; held across the round trip
	mu       sync.Mutex // guards the fields below; never held across I/O
	rev      uint64     // revision last written by this server (the token)
	validTo  time.Time  // when Check starts failing (monotonic)
	held     bool
	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// Open opens (creating it if needed) the group's lease bucket.
func Open(ctx context.Context, js jetstream.JetStream, o Options) (*Lease, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	// Bind to the bucket when it exists: creating or updating it is a
	// cluster-wide operation, slow while a NATS node is away.
	kv, err := js.KeyValue(ctx, Bucket(o.Group))
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: Bucket(o.Group), History: 1, TTL: o.TTL, Replicas: max(1, o.Replicas),
			Storage: jetstream.FileStorage, Description: "streamdb --ha-group lease",
		})
	}
	if err == nil {
		if st, serr := kv.Status(ctx); serr == nil && st.TTL() != o.TTL {
			return nil, fmt.Errorf("%w: the lease bucket %s of group %s expires entries after %s, not --ha-lease-ttl %s: give every server of a group the same --ha-lease-ttl", ErrMismatch, Bucket(o.Group), o.Group, st.TTL(), o.TTL)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open lease bucket %s: %w", Bucket(o.Group), err)
	}
	value, err := json.Marshal(Holding{Holder: o.Holder, Addr: o.Addr, Since: time.Now().UTC()})
	if err != nil {
		return nil, err
	}
	return &Lease{o: o, kv: kv, value: value, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Current returns who holds the lease now (nil when nobody does).
func (l *Lease) Current(ctx context.Context) (*Holding, error) {
	e, err := l.kv.Get(ctx, leaseKey)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h := new(Holding)
	if err := json.Unmarshal(e.Value(), h); err != nil {
		return nil, fmt.Errorf("lease of group %s holds %q: %w", l.o.Group, e.Value(), err)
	}
	return h, nil
}

// TryAcquire takes the lease if nobody holds it. It reports whether this
// server now holds it; then the lease renews itself until Close or loss.
func (l *Lease) TryAcquire(ctx context.Context) (bool, error) {
	sent := time.Now()
	rev, err := l.kv.Create(ctx, leaseKey, l.value)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	l.mu.Lock()
	l.rev, l.validTo, l.held = rev, sent.Add(l.o.TTL-l.o.Renew), true
	l.mu.Unlock()
	go l.renewLoop()
	return true, nil
}

// Acquire waits until this server holds the lease, trying every renew
// interval; waiting, when not nil, runs each time another server holds
// it.
func (l *Lease) Acquire(ctx context.Context, waiting func(*Holding)) error {
	for {
		ok, err := l.TryAcquire(ctx)
		if ok {
			return nil
		}
		if err != nil {
			l.o.Log.Warn("could not reach the lease", "group", l.o.Group, "err", err)
		} else if waiting != nil {
			if h, err := l.Current(ctx); err == nil && h != nil {
				waiting(h)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(l.o.Renew):
		}
	}
}

// Token is the fencing token: the lease revision this server last wrote.
func (l *Lease) Token() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rev
}

// Check returns nil while this server holds the lease by its own clock,
// ErrLost otherwise. It costs no round trip: use it before each write.
func (l *Lease) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held || !time.Now().Before(l.validTo) {
		return ErrLost
	}
	return nil
}

// Confirm renews the lease now, proving at the NATS server that no other
// server took it: a compare-and-set on the token. Use it before a commit
// other servers will read (a checkpoint's metadata).
func (l *Lease) Confirm(ctx context.Context) error {
	if err := l.Check(); err != nil {
		return err
	}
	return l.renew(ctx)
}

// Lost is closed once the lease is lost: a renewal found another
// server's revision, or none succeeded before the lease's end.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

func (l *Lease) renew(ctx context.Context) error {
	l.renewMu.Lock()
	defer l.renewMu.Unlock()
	l.mu.Lock()
	held, last := l.held, l.rev
	l.mu.Unlock()
	if !held {
		return ErrLost
	}
	sent := time.Now()
	rev, err := l.kv.Update(ctx, leaseKey, l.value, last)
	if isWrongRevision(err) {
		// A renewal whose answer was lost (a timeout) may have been
		// stored: if the entry is this server's own value, it still
		// holds the lease, at that revision.
		if e, gerr := l.kv.Get(ctx, leaseKey); gerr == nil && bytes.Equal(e.Value(), l.value) {
			rev, err = l.kv.Update(ctx, leaseKey, l.value, e.Revision())
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		return ErrLost
	}
	if err == nil {
		l.rev, l.validTo = rev, sent.Add(l.o.TTL-l.o.Renew)
		return nil
	}
	if errors.Is(err, jetstream.ErrKeyExists) || isWrongRevision(err) || !time.Now().Before(l.validTo) {
		l.loseLocked(err)
		return fmt.Errorf("%w: %v", ErrLost, err)
	}
	return err
}

// isWrongRevision reports a compare-and-set that found another revision
// (the entry expired, or another server wrote it).
func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

func (l *Lease) loseLocked(cause error) {
	l.held = false
	l.lostOnce.Do(func() {
		l.o.Log.Error("lost the lease of the group: stepping down", "group", l.o.Group, "token", l.rev, "cause", cause)
		close(l.lost)
	})
}

func (l *Lease) renewLoop() {
	defer close(l.done)
	t := time.NewTicker(l.o.Renew)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.lost:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), l.o.Renew)
		err := l.renew(ctx)
		cancel()
		if err != nil && !errors.Is(err, ErrLost) {
			l.o.Log.Warn("could not renew the lease", "group", l.o.Group, "err", err)
			l.mu.Lock()
			if !time.Now().Before(l.validTo) {
				l.loseLocked(err)
			}
			l.mu.Unlock()
		}
	}
}

// Release stops renewing and deletes the lease if this server still holds
// it, so that a standby takes over without waiting for the TTL (a clean
// shutdown).
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	held, rev := l.held, l.rev
	l.held = false
	l.mu.Unlock()
	if !held {
		return nil
	}
	close(l.stop)
	<-l.done
	return l.kv.Delete(ctx, leaseKey, jetstream.LastRevision(rev))
}
