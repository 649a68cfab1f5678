package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A member's states.
const (
	StateJoining = "joining" // starting: not yet waiting as a standby nor serving
	StateActive  = "active"  // up: serving as the coordinator, or ready as a standby
	StateLeaving = "leaving" // shutting down cleanly; its entry is deleted next
	// StateStale is shown (never stored) for an entry whose heartbeat is
	// older than two heartbeat intervals: the member stopped renewing
	// and its entry expires at the bucket's TTL.
	StateStale = "stale"
)

// A member's roles.
const (
	RoleCoordinator = "coordinator" // holds the cluster's lease and runs the views
	RoleStandby     = "standby"     // waits for the lease (package ha)
)

// Record is a member's entry in the nodes bucket.
type Record struct {
	Node       string    `json:"node"`
	Addr       string    `json:"addr"`
	State      string    `json:"state"`
	Role       string    `json:"role"`
	Views      []string  `json:"views"`
	StateBytes int64     `json:"state_bytes"`
	RowsPerSec float64   `json:"rows_per_sec"`
	Started    time.Time `json:"started"`
	// Holder is unique per process start: a member tells its own entry
	// from another server's that uses the same node name.
	Holder string `json:"holder"`
}

// Member is a Record as a reader sees it.
type Member struct {
	Record
	// HeartbeatAge is how long before the reader's newest heartbeat (by
	// the NATS server's clock), plus the time since on the reader's
	// monotonic clock, the member's entry was stored; Known is false
	// while the reader has no heartbeat of its own to measure from.
	HeartbeatAge time.Duration
	Known        bool
}

// Load is what a member reports of its work at each heartbeat.
type Load struct {
	Views      []string
	StateBytes int64
	// RowsIn counts the rows the views have read since the process
	// started; the heartbeat turns it into a rate.
	RowsIn uint64
}

// MemberOptions configure a server's membership.
type MemberOptions struct {
	Cluster string
	// Node is the member's name (--node-name), unique in the cluster.
	Node string
	// Addr is where clients reach the member's PostgreSQL protocol.
	Addr   string
	Holder string
	// TTL is how long an entry lasts without a heartbeat; Heartbeat is
	// the time between heartbeats (less than half the TTL).
	TTL, Heartbeat time.Duration
	Replicas       int
	Log            *slog.Logger
	// Load, when not nil, is read at each heartbeat.
	Load func() Load
	// Status, when not nil, is read at each heartbeat for the member's
	// state and role (else they stay joining and standby).
	Status func() (state, role string)
}

// ErrMismatch: the nodes bucket was made with another TTL.
var ErrMismatch = errors.New("settings differ from the cluster's")

// Membership is this server's entry in its cluster's nodes bucket,
// kept alive by a heartbeat until Leave.
type Membership struct {
	o   MemberOptions
	kv  jetstream.KeyValue
	key string

	mu         sync.Mutex // guards the fields below; never held across I/O
	rec        Record
	leaving    bool
	rev        uint64    // revision this server last wrote (0: not registered)
	serverTime time.Time // the NATS server's time of that write
	localAt    time.Time // when this server read it (monotonic)
	lastRows   uint64
	lastRowsAt time.Time

	stop chan struct{}
	done chan struct{}
}

// Join opens (creating it if needed) the cluster's nodes bucket and
// starts registering this server and renewing its entry. Registration
// goes on in the background: a restarted server whose old entry has not
// expired yet, or one that shares another's node name, waits until the
// entry expires (logging why).
func Join(ctx context.Context, js jetstream.JetStream, o MemberOptions) (*Membership, error) {
	if err := ValidateName(o.Cluster); err != nil {
		return nil, err
	}
	if o.Node == "" {
		return nil, fmt.Errorf("a member of cluster %s needs a node name (--node-name)", o.Cluster)
	}
	if o.Heartbeat <= 0 || o.TTL < 2*o.Heartbeat+o.Heartbeat/2 {
		return nil, fmt.Errorf("the node entry's TTL (%s) must be at least 2.5 times the heartbeat interval (%s)", o.TTL, o.Heartbeat)
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	name := NodesBucket(o.Cluster)
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: name, History: 1, TTL: o.TTL, Replicas: max(1, o.Replicas),
			Storage: jetstream.FileStorage, Description: "streamdb --cluster members",
		})
	}
	if err == nil {
		if st, serr := kv.Status(ctx); serr == nil && st.TTL() != o.TTL {
			return nil, fmt.Errorf("%w: the nodes bucket %s expires entries after %s, not %s: give every server of cluster %s the same --ha-lease-ttl", ErrMismatch, name, st.TTL(), o.TTL, o.Cluster)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open nodes bucket %s: %w", name, err)
	}
	m := &Membership{o: o, kv: kv, key: nodeKey(o.Node), stop: make(chan struct{}), done: make(chan struct{}),
		rec: Record{Node: o.Node, Addr: o.Addr, State: StateJoining, Role: RoleStandby, Started: time.Now().UTC(), Holder: o.Holder}}
	m.lastRowsAt = time.Now()
	go m.loop()
	return m, nil
}

// Node is this member's name.
func (m *Membership) Node() string { return m.o.Node }

// SetLoad replaces the load function (the engine's, once it is open).
func (m *Membership) SetLoad(load func() Load) { m.mu.Lock(); m.o.Load = load; m.mu.Unlock() }

func (m *Membership) loop() {
	defer close(m.done)
	t := time.NewTicker(m.o.Heartbeat)
	defer t.Stop()
	warned := false
	for {
		ctx, cancel := context.WithTimeout(context.Background(), m.o.Heartbeat)
		err := m.beat(ctx)
		cancel()
		switch {
		case err == nil:
			warned = false
		case !warned:
			m.o.Log.Warn("cluster heartbeat failed; retrying", "cluster", m.o.Cluster, "node", m.o.Node, "err", err)
			warned = true
		}
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// record is the entry the next heartbeat writes, with the load now.
func (m *Membership) record() Record {
	m.mu.Lock()
	load, leaving := m.o.Load, m.leaving
	m.mu.Unlock()
	var l Load
	if load != nil && !leaving {
		l = load()
	}
	rec := m.rec
	if m.o.Status != nil {
		rec.State, rec.Role = m.o.Status()
	}
	if leaving {
		rec.State = StateLeaving
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	rec.Views, rec.StateBytes = l.Views, l.StateBytes
	if el := now.Sub(m.lastRowsAt).Seconds(); el > 0 && l.RowsIn >= m.lastRows {
		rec.RowsPerSec = float64(l.RowsIn-m.lastRows) / el
	}
	m.lastRows, m.lastRowsAt = l.RowsIn, now
	if rec.Views == nil {
		rec.Views = []string{}
	}
	return rec
}

// beat writes this member's entry: a compare-and-set on the revision it
// last wrote, or a create when it holds none (first beat, or its entry
// expired while the process was paused).
func (m *Membership) beat(ctx context.Context) error {
	rec := m.record()
	value, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	m.mu.Lock()
	rev := m.rev
	m.mu.Unlock()
	var newRev uint64
	if rev != 0 {
		newRev, err = m.kv.Update(ctx, m.key, value, rev)
		if isWrongRevision(err) {
			rev, err = 0, nil
		}
	}
	if rev == 0 && err == nil {
		newRev, err = m.kv.Create(ctx, m.key, value)
		if errors.Is(err, jetstream.ErrKeyExists) {
			return m.claimExisting(ctx, value)
		}
	}
	if err != nil {
		return err
	}
	return m.noteWrite(ctx, newRev)
}

// claimExisting handles a create that found an entry: this process's
// own (a write whose answer was lost) is continued; another's is left
// to expire.
func (m *Membership) claimExisting(ctx context.Context, value []byte) error {
	e, err := m.kv.Get(ctx, m.key)
	if err != nil {
		return err
	}
	var other Record
	if json.Unmarshal(e.Value(), &other) == nil && other.Holder == m.o.Holder {
		rev, err := m.kv.Update(ctx, m.key, value, e.Revision())
		if err != nil {
			return err
		}
		return m.noteWrite(ctx, rev)
	}
	m.mu.Lock()
	m.rev = 0
	m.mu.Unlock()
	return fmt.Errorf("node name %s is registered by another process (address %s, started %s): waiting for its entry to expire; give each server its own --node-name",
		m.o.Node, other.Addr, other.Started.Format(time.RFC3339))
}

// noteWrite records rev and reads the entry back for the NATS server's
// time of the write, which heartbeat ages are measured from.
func (m *Membership) noteWrite(ctx context.Context, rev uint64) error {
	m.mu.Lock()
	m.rev = rev
	m.mu.Unlock()
	e, err := m.kv.Get(ctx, m.key)
	if err != nil {
		return err
	}
	if e.Revision() != rev {
		return nil // rewritten since; the next beat sorts it out
	}
	now := time.Now()
	m.mu.Lock()
	m.serverTime, m.localAt = e.Created(), now
	m.mu.Unlock()
	return nil
}

// Members lists the cluster's members, sorted by node name.
func (m *Membership) Members(ctx context.Context) ([]Member, error) {
	keys, err := m.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	serverTime, localAt := m.serverTime, m.localAt
	m.mu.Unlock()
	var out []Member
	for _, k := range keys {
		e, err := m.kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // expired or deleted since the listing
		}
		if err != nil {
			return nil, err
		}
		var mem Member
		if err := json.Unmarshal(e.Value(), &mem.Record); err != nil {
			return nil, fmt.Errorf("node entry %s holds %q: %w", k, e.Value(), err)
		}
		if !serverTime.IsZero() {
			mem.Known = true
			mem.HeartbeatAge = max(0, serverTime.Add(time.Since(localAt)).Sub(e.Created()))
			if mem.HeartbeatAge > 2*m.o.Heartbeat {
				mem.State = StateStale
			}
		}
		out = append(out, mem)
	}
	slices.SortFunc(out, func(a, b Member) int { return bytes.Compare([]byte(a.Node), []byte(b.Node)) })
	return out, nil
}

// Leave stops the heartbeat, marks the entry leaving and deletes it (a
// clean shutdown), so that the others see the member go at once rather
// than after the TTL.
func (m *Membership) Leave(ctx context.Context) error {
	select {
	case <-m.stop:
		return nil
	default:
	}
	close(m.stop)
	<-m.done
	m.mu.Lock()
	m.leaving = true
	rev := m.rev
	m.mu.Unlock()
	if rev == 0 {
		return nil
	}
	if value, err := json.Marshal(m.record()); err == nil {
		if r, err := m.kv.Update(ctx, m.key, value, rev); err == nil {
			rev = r
		}
	}
	err := m.kv.Delete(ctx, m.key, jetstream.LastRevision(rev))
	if isWrongRevision(err) {
		return nil // expired, or another process's now
	}
	return err
}
