package node

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/config"
)

// openRemotes opens the object store buckets that state.checkpoints.dir
// and state.savepoints.dir name (nats-object://BUCKET[?replicas=N]), on
// the server's own NATS connection, and has the coordinator upload to
// them. One bucket may hold both. Its requests are retried (broker.Retry):
// a server that takes over on a NATS cluster may start while a node goes.
func (n *Node) openRemotes() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opened := map[string]*checkpoint.Remote{}
	open := func(key, loc string) (*checkpoint.Remote, error) {
		if loc == "" {
			return nil, nil
		}
		u, err := parseRemoteSetting(key, loc)
		if err != nil {
			return nil, err
		}
		if r := opened[u.Bucket]; r != nil {
			return r, nil
		}
		var r *checkpoint.Remote
		err = broker.Retry(ctx, broker.RequestAttempt, func(ctx context.Context) (err error) {
			r, err = checkpoint.OpenRemote(ctx, n.broker.JS, u.Bucket, u.Replicas)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		opened[u.Bucket] = r
		n.log.Info("checkpoint bucket", "setting", key, "bucket", u.Bucket, "replicas", u.Replicas)
		return r, nil
	}
	cks, err := open(config.StateCheckpointsDir, n.cfg.RemoteCheckpoints())
	if err != nil {
		return err
	}
	sps, err := open(config.StateSavepointsDir, n.cfg.RemoteSavepoints())
	if err != nil {
		return err
	}
	if cks == nil && sps == nil {
		return nil
	}
	return n.coord.SetRemote(ctx, cks, sps)
}

// parseRemoteSetting reads a bucket setting; it names a bucket, never a
// point in one.
func parseRemoteSetting(key, loc string) (checkpoint.RemoteURL, error) {
	u, err := checkpoint.ParseRemoteURL(loc)
	if err != nil {
		return u, fmt.Errorf("%s: %w", key, err)
	}
	if u.Name != "" {
		return u, fmt.Errorf("%s: %q names a path inside the bucket; write %s%s (a bucket only)", key, loc, config.RemoteScheme, u.Bucket)
	}
	return u, nil
}

// remoteScratch, in the data directory, receives checkpoints downloaded
// from a bucket at start; it is removed once the state is restored.
const remoteScratch = "remote-restore"

// freshDataDir reports whether the data directory holds no state of a
// previous run: no checkpoint record, and (pebble) no state files. Only
// then does a server with a checkpoint bucket restore from it at start;
// otherwise its own state and checkpoints are newer or as new.
func freshDataDir(cfg *config.Config, memory bool) bool {
	if _, err := os.Stat(filepath.Join(cfg.DataDir, checkpoint.RecordFile)); err == nil {
		return false
	}
	if memory {
		return true
	}
	entries, err := os.ReadDir(cfg.StateDir())
	return err != nil && os.IsNotExist(err) || err == nil && len(entries) == 0
}

// fetchRemotePoint downloads the point loc names
// (nats-object://BUCKET[/NAME], see checkpoint.RemoteURL; the newest
// whole checkpoint without NAME) into scratch. Without NAME, a bucket
// that does not exist or holds no checkpoint gives nil; a NAME that is
// not there is an error.
func fetchRemotePoint(ctx context.Context, loc string, b *broker.Broker, scratch string) (*checkpoint.Meta, error) {
	u, err := checkpoint.ParseRemoteURL(loc)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var r *checkpoint.Remote
	err = broker.Retry(ctx, broker.RequestAttempt, func(ctx context.Context) (err error) {
		r, err = checkpoint.BindRemote(ctx, b.JS, u.Bucket)
		return err
	})
	if errors.Is(err, jetstream.ErrBucketNotFound) && u.Name == "" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return checkpoint.FetchRemote(ctx, r, u.Name, scratch)
}
