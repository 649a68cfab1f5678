package broker

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"streamdb/storage"
)

// JetStream does not survive a full disk: a message block whose write
// fails keeps the error (filestore.go, werr), so its stream refuses every
// later write, and publishers only see timeouts, until the server
// restarts. So the embedded server is kept off a full disk: while the
// filesystem holding its store has less than its reserve free
// (storage.ReserveFor), the account's JetStream file storage limit is set
// to zero, and JetStream refuses every new message cleanly (its
// account-limit error, before anything is written), from streamdb and
// from producers alike. Once there is room again the limit is lifted.
// streamdb's own writes also check the disk first (SpaceError), so they
// fail with 53100 without waiting for the next look. A writer's look is
// reused by the writes of the next spaceRecheck (one statfs per write
// cost as much as a tenth of a single-row INSERT's CPU); the guard's own
// looks are not reused, so a write after a pause (say, after the disk
// filled) always looks afresh.

// diskCheckInterval is how often the guard looks at the disk.
const diskCheckInterval = 100 * time.Millisecond

// spaceRecheck is how long a writer's look at the disk answers for later
// writes: far below the time a write takes to reach JetStream under load,
// so it widens the window between a look and the write it admits little.
const spaceRecheck = time.Millisecond

// spaceLook is a writer's look at the disk.
type spaceLook struct {
	at  time.Time
	err error
}

// diskGuard watches the disk of the embedded server's store.
type diskGuard struct {
	dir  string
	ns   *server.Server
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	full bool

	// last is the newest writer's look (spaceError), nil before one.
	last atomic.Pointer[spaceLook]
}

func startDiskGuard(ns *server.Server, dir string) *diskGuard {
	g := &diskGuard{dir: dir, ns: ns, stop: make(chan struct{}), done: make(chan struct{})}
	g.check()
	go g.run()
	return g
}

func (g *diskGuard) run() {
	defer close(g.done)
	t := time.NewTicker(diskCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.check()
		}
	}
}

func (g *diskGuard) close() {
	close(g.stop)
	<-g.done
}

// spaceError is the disk's state now, or as a writer saw it less than
// spaceRecheck ago.
func (g *diskGuard) spaceError() error {
	now := time.Now()
	if l := g.last.Load(); l != nil && now.Sub(l.at) < spaceRecheck {
		return l.err
	}
	err := g.look()
	g.last.Store(&spaceLook{at: now, err: err})
	return err
}

// look checks the disk and applies what it finds.
func (g *diskGuard) look() error {
	err := storage.CheckSpace(g.dir, "JetStream's store")
	g.apply(err != nil, err)
	return err
}

func (g *diskGuard) check() { _ = g.look() }

// fullLimits refuse every message to file storage and leave the rest
// unlimited.
var fullLimits = map[string]server.JetStreamAccountLimits{"": {
	MaxMemory: -1, MaxStore: 0, MaxStreams: -1, MaxConsumers: -1, MaxAckPending: -1,
	MemoryMaxStreamBytes: -1, StoreMaxStreamBytes: -1,
}}

// apply sets the account's limits for a full (or no longer full) disk.
// While full they are set on every look, since a reload of the server's
// options (users, auth.go) may have put the defaults back.
func (g *diskGuard) apply(full bool, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !full && !g.full {
		return
	}
	acc := g.ns.GlobalAccount()
	if full {
		if uerr := acc.UpdateJetStreamLimits(fullLimits); uerr != nil && !g.full {
			slog.Warn("disk full: could not stop JetStream writes", "err", uerr)
		}
		if !g.full {
			slog.Warn("disk full: JetStream refuses new messages until space is freed", "err", err)
		}
		g.full = true
		return
	}
	if uerr := acc.UpdateJetStreamLimits(nil); uerr != nil {
		slog.Warn("disk has room again, but JetStream's limits could not be restored; retrying", "err", uerr)
		return
	}
	g.full = false
	slog.Info("disk has room again: JetStream takes new messages")
}
