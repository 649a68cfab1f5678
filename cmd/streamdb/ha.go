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

	"streamdb/checkpoint"
	"streamdb/config"
	"streamdb/ha"
)

// haFlags are the --ha-* flags.
type haFlags struct {
	group     string
	advertise string
	ttl       time.Duration
	renew     time.Duration
	replicas  int
}

// errStoppedAsStandby: a signal stopped the server while it was a standby.
var errStoppedAsStandby = errors.New("stopped while standby")

// haCheckpoints makes state.checkpoints.dir a bucket: the one it names,
// else the group's own. It returns the bucket.
func haCheckpoints(cfg *config.Config, hf haFlags) (checkpoint.RemoteURL, error) {
	if dir := cfg.RemoteCheckpoints(); dir != "" {
		u, err := checkpoint.ParseRemoteURL(dir)
		if err != nil {
			return u, fmt.Errorf("state.checkpoints.dir: %w", err)
		}
		return u, nil
	}
	u := checkpoint.RemoteURL{Bucket: ha.CheckpointBucket(hf.group), Replicas: max(1, hf.replicas)}
	if err := cfg.Set("state.checkpoints.dir", u.String()); err != nil {
		return u, err
	}
	return u, nil
}

// haJoin makes this server a member of its group: it answers PostgreSQL
// connections as a standby (57P03, naming the active server) until it
// holds the group's lease, then points cfg.RestoreFrom at the group's
// bucket, so that the engine continues from the newest whole checkpoint's
// state and JetStream positions.
// With no checkpoint in the bucket (a new group), the server starts from
// its own data directory. stop ends the wait (a signal).
func haJoin(cfg *config.Config, hf haFlags, log *slog.Logger, stop <-chan os.Signal) (*ha.Lease, error) {
	if cfg.NATSURL == "" {
		return nil, fmt.Errorf("--ha-group needs --nats-url: the servers of a group share a NATS server or cluster")
	}
	if cfg.RestoreFrom != "" {
		return nil, fmt.Errorf("--restore-from cannot be used with --ha-group: a server of a group starts from the group's newest checkpoint")
	}
	bucket, err := haCheckpoints(cfg, hf)
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(cfg.NATSURL, nats.Name("streamdb ha "+hf.group), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", cfg.NATSURL, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	addr := hf.advertise
	if addr == "" {
		addr = cfg.Listen
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
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
	var active atomic.Value
	active.Store("")
	standby := ha.ServeStandby(ln, func() string { return active.Load().(string) })
	log.Info("standby: waiting for the lease of the group", "group", hf.group, "listen", ln.Addr().String())
	// A standby keeps trying to reach the lease (a NATS node away, a
	// cluster without a leader yet) rather than exit.
	var lease *ha.Lease
	var permanent error
	err = retry(ctx, opts.Renew, func() bool { return true }, log, "open the lease bucket", func() error {
		lease, err = ha.Open(ctx, js, opts)
		if errors.Is(err, ha.ErrMismatch) {
			permanent, err = err, nil
		}
		return err
	})
	if permanent != nil {
		err = permanent
	}
	if err == nil {
		err = lease.Acquire(ctx, func(h *ha.Holding) {
			if active.Swap(h.Addr) != h.Addr {
				log.Info("standby: the active server of the group", "group", hf.group, "active", h.Addr, "holder", h.Holder)
			}
		})
	}
	standby.Close()
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil, errStoppedAsStandby
		}
		return nil, err
	}
	log.Info("took the lease of the group: becoming active", "group", hf.group, "token", lease.Token())
	var remote *checkpoint.Remote
	var metas []*checkpoint.Meta
	held := func() bool { return lease.Check() == nil }
	err = retry(ctx, opts.Renew, held, log, "list the group's checkpoints", func() error {
		if remote, err = checkpoint.OpenRemote(ctx, js, bucket.Bucket, bucket.Replicas); err != nil {
			return err
		}
		metas, err = remote.List(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(metas) == 0 {
		log.Warn("the group's checkpoint bucket holds no checkpoint: starting from this server's data directory", "bucket", remote.Bucket)
		return lease, nil
	}
	// The engine downloads the newest whole checkpoint of the bucket
	// (skipping any with a file missing or damaged) and restores it,
	// whatever this data directory holds from an earlier term.
	cfg.RestoreFrom = checkpoint.RemoteScheme + remote.Bucket
	return lease, nil
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
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	log.Warn("stepping down to standby: restarting this process")
	return syscall.Exec(exe, os.Args, os.Environ())
}
