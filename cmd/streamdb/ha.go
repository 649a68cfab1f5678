package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/config"
	"streamdb/ha"
	"streamdb/pgwire"
)

// haFlags are the --ha-* flags.
type haFlags struct {
	group     string
	advertise string
	ttl       time.Duration
	renew     time.Duration
	replicas  int
}

// errStoppedAsStandby: a signal stopped the server while it was a standby
// or taking over (any lease it took is released).
var errStoppedAsStandby = errors.New("stopped while standby")

// Phases of a server of a group, for /readyz.
const (
	phaseNone     int32 = iota // no group, or active
	phaseStandby               // waiting for the lease
	phaseTakeover              // holds the lease, restoring
	phaseStepDown              // lost the lease, restarting as standby
)

// haState is what /readyz says of a server of a group that is not active.
type haState struct {
	group  string
	phase  atomic.Int32
	active atomic.Value // string: host:port of the active server, "" unknown
}

func newHAState(group string) *haState {
	s := &haState{group: group}
	s.active.Store("")
	return s
}

// notReady says why the server serves no queries, or nil.
func (s *haState) notReady() error {
	if s == nil {
		return nil
	}
	switch s.phase.Load() {
	case phaseStandby:
		if a := s.active.Load().(string); a != "" {
			return fmt.Errorf("standby of group %s; the active server is %s", s.group, a)
		}
		return fmt.Errorf("standby of group %s; no server of the group is active yet", s.group)
	case phaseTakeover:
		return fmt.Errorf("taking over group %s: restoring its newest checkpoint", s.group)
	case phaseStepDown:
		return fmt.Errorf("lost the lease of group %s: stepping down to standby", s.group)
	}
	return nil
}

// haSettings makes state.checkpoints.dir a bucket: the one it names,
// else the group's own. state.savepoints.dir, unless it names a directory
// or bucket, goes to the same bucket, so that the server that takes over
// lists and rolls back to savepoints the old active server took. The
// streams the server creates get --ha-replicas unless
// nats.stream-replicas says otherwise. It returns the checkpoint bucket.
func haSettings(cfg *config.Config, hf haFlags) (checkpoint.RemoteURL, error) {
	var u checkpoint.RemoteURL
	if dir := cfg.RemoteCheckpoints(); dir != "" {
		var err error
		if u, err = checkpoint.ParseRemoteURL(dir); err != nil {
			return u, fmt.Errorf("state.checkpoints.dir: %w", err)
		}
	} else {
		u = checkpoint.RemoteURL{Bucket: ha.CheckpointBucket(hf.group), Replicas: max(1, hf.replicas)}
		if err := cfg.Set(config.StateCheckpointsDir, u.String()); err != nil {
			return u, err
		}
	}
	if cfg.Int(config.NatsStreamReplicas) == 0 {
		if err := cfg.Set(config.NatsStreamReplicas, fmt.Sprint(max(1, hf.replicas))); err != nil {
			return u, err
		}
	}
	if cfg.Values[config.StateSavepointsDir] == "" {
		if err := cfg.Set(config.StateSavepointsDir, u.String()); err != nil {
			return u, err
		}
	}
	return u, nil
}

// groupMember is what a server shares with its group once it holds the
// lease.
type groupMember struct {
	lease *ha.Lease
	roles *ha.Roles
	// standby answers the port (refusing with 57P03 "starting up" once
	// this server took the lease) until the engine is open; closeStandby
	// frees its address for the server's own listener.
	standby sessionResponder
}

// sessionResponder answers the PostgreSQL port while this server is not
// active: an --ha-group standby refuses every session (standbyResponder),
// a --cluster member forwards them to the coordinator (memberForwarder).
// Both refuse with 57P03 once the server takes over.
type sessionResponder interface {
	// ActiveChanged tells it the lease now names addr.
	ActiveChanged(addr string)
	TakingOver()
	Close() error
}

// standbyResponder is ha.Standby as a sessionResponder: its refusals read
// the active server when they are sent.
type standbyResponder struct{ *ha.Standby }

func (standbyResponder) ActiveChanged(string) {}

// closeStandby stops the refusals (once).
func (m *groupMember) closeStandby() {
	if m.standby != nil {
		m.standby.Close()
		m.standby = nil
	}
}

// haJoin makes this server a member of its group: it answers PostgreSQL
// connections as a standby (57P03, naming the active server; a --cluster
// member forwards them to the coordinator instead) until it holds the
// group's lease, then points cfg.RestoreFrom at the group's
// bucket, so that the engine continues from the newest whole checkpoint's
// state and JetStream positions.
// With no checkpoint in the bucket (a new group), the server starts from
// its own data directory. Cancelling ctx (a signal) ends the wait and
// releases the lease if it was taken: errStoppedAsStandby.
func haJoin(ctx context.Context, cfg *config.Config, hf haFlags, sec pgwire.Security, st *haState, log *slog.Logger) (*groupMember, error) {
	if cfg.NATSURL == "" {
		return nil, fmt.Errorf("--ha-group needs --nats-url: the servers of a group share a NATS server or cluster")
	}
	if cfg.RestoreFrom != "" {
		return nil, fmt.Errorf("--restore-from cannot be used with --ha-group: a server of a group starts from the group's newest checkpoint")
	}
	bucket, err := haSettings(cfg, hf)
	if err != nil {
		return nil, err
	}
	nc, js, err := connectJetStream(cfg.NATSURL, "streamdb ha "+hf.group)
	if err != nil {
		return nil, err
	}
	addr := hf.clientAddr(cfg)
	opts := ha.Options{Group: hf.group, Holder: holderID(), Addr: addr,
		TTL: hf.ttl, Renew: hf.renew, Replicas: hf.replicas, Log: log}
	if err := opts.Validate(); err != nil {
		nc.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("listen on %s: %w (choose another address with --listen)", cfg.Listen, err)
	}
	st.phase.Store(phaseStandby)
	var standby sessionResponder
	noteActive := func(h *ha.Holding) {
		if st.active.Swap(h.Addr) != h.Addr {
			log.Info("standby: the active server of the group", "group", hf.group, "active", h.Addr, "holder", h.Holder)
			if standby != nil {
				standby.ActiveChanged(h.Addr)
			}
		}
	}
	// The lease bucket is opened, and its holder read, before the first
	// refusal, so that refusals name the active server from the start
	// (connections meanwhile wait in the listen queue). Only if NATS
	// cannot be reached at once does the standby refuse without a name
	// while it keeps trying.
	var lease *ha.Lease
	var permanent error
	open := func() error {
		lease, err = ha.Open(ctx, js, opts)
		if errors.Is(err, ha.ErrMismatch) {
			permanent, err = err, nil
		}
		if err == nil && permanent == nil {
			if h, cerr := lease.Current(ctx); cerr == nil && h != nil {
				noteActive(h)
			}
		}
		return err
	}
	err = open()
	if cfg.Cluster != "" {
		standby = forwardSessions(ln, sec, st, addr, log)
		log.Info("cluster member: forwarding sessions to the coordinator while waiting for the lease", "cluster", cfg.Cluster, "listen", ln.Addr().String())
	} else {
		standby = standbyResponder{ha.ServeStandby(ln, func() string { return st.active.Load().(string) })}
		log.Info("standby: waiting for the lease of the group", "group", hf.group, "listen", ln.Addr().String())
	}
	if err != nil && permanent == nil {
		// A standby keeps trying to reach the lease (a NATS node away, a
		// cluster without a leader yet) rather than exit.
		err = retry(ctx, opts.Renew, func() bool { return true }, log, "open the lease bucket", open)
	}
	if permanent != nil {
		err = permanent
	}
	if err == nil {
		err = lease.Acquire(ctx, noteActive)
	}
	if err != nil {
		standby.Close()
		nc.Close()
		if ctx.Err() != nil {
			return nil, errStoppedAsStandby
		}
		return nil, err
	}
	st.phase.Store(phaseTakeover)
	standby.TakingOver()
	log.Info("took the lease of the group: becoming active", "group", hf.group, "token", lease.Token())
	m := &groupMember{lease: lease, standby: standby}
	var remote *checkpoint.Remote
	var metas []*checkpoint.Meta
	held := func() bool { return lease.Check() == nil }
	err = retry(ctx, opts.Renew, held, log, "list the group's checkpoints", func() error {
		if m.roles, err = ha.OpenRoles(ctx, js, hf.group, hf.replicas); err != nil {
			return err
		}
		if remote, err = checkpoint.OpenRemote(ctx, js, bucket.Bucket, bucket.Replicas); err != nil {
			return err
		}
		metas, err = remote.List(ctx)
		return err
	})
	if ctx.Err() != nil {
		m.closeStandby()
		m.release(log)
		return nil, errStoppedAsStandby
	}
	if err != nil {
		m.closeStandby()
		m.release(log)
		return nil, err
	}
	if len(metas) == 0 {
		log.Warn("the group's checkpoint bucket holds no checkpoint: starting from this server's data directory", "bucket", remote.Bucket)
		return m, nil
	}
	// The engine downloads the newest whole checkpoint of the bucket
	// (skipping any with a file missing or damaged) and restores it,
	// whatever this data directory holds from an earlier term.
	cfg.RestoreFrom = checkpoint.RemoteScheme + remote.Bucket
	return m, nil
}

// release gives the lease up (a clean stop), so that a standby takes over
// at once instead of after the lease's TTL.
func (m *groupMember) release(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.lease.Release(ctx); err != nil {
		log.Warn("releasing the lease of the group", "err", err)
	}
}

// retry runs fn until it succeeds, every interval, while ok holds and
// ctx is not done; it returns fn's last error otherwise.
func retry(ctx context.Context, interval time.Duration, ok func() bool, log *slog.Logger, what string, fn func() error) error {
	for {
		err := fn()
		if err == nil || !ok() || ctx.Err() != nil {
			return err
		}
		log.Warn("could not "+what+"; retrying", "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// holderID names this process in the lease: host, pid and a random part.
func holderID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// stepDown replaces this process by a fresh copy of itself (same
// arguments, same pid), which starts as a standby: nothing of the old
// active state survives to commit. Go opens every file close-on-exec, so
// the listener, Pebble's files and the NATS connections close with it.
func stepDown(log *slog.Logger) error {
	log.Warn("stepping down to standby: restarting this process")
	return reexec()
}

// restartAfterDamage restarts the process once the live state's files
// were found damaged; the new process recovers from a checkpoint.
func restartAfterDamage(log *slog.Logger, damage error) error {
	log.Error("restarting this process to recover from the newest intact checkpoint", "err", damage)
	return reexec()
}

// reexec replaces the process with a new run of the same binary and
// arguments (the PID stays, so supervisors and clients' retries see one
// server).
func reexec() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, os.Args, os.Environ())
}

// connectJetStream connects to the NATS server at url as name, replying
// under streamdb's inbox prefix, which the NATS server's permissions keep
// from producers (README), and reconnecting for as long as it runs.
func connectJetStream(url, name string) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.CustomInboxPrefix(broker.InboxPrefix))
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// clientAddr is the address clients reach this server at: --ha-advertise,
// else --listen.
func (hf haFlags) clientAddr(cfg *config.Config) string {
	if hf.advertise != "" {
		return hf.advertise
	}
	return cfg.Listen
}
