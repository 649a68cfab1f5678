package sql

import (
	"context"
	"fmt"
	"time"

	"streamdb/checkpoint"
	"streamdb/config"
)

// openRemotes opens the object store buckets that state.checkpoints.dir
// and state.savepoints.dir name (nats-object://BUCKET[?replicas=N]), on
// the server's own NATS connection, and has the coordinator upload to
// them. One bucket may hold both.
func (e *Engine) openRemotes() error {
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
		r, err := checkpoint.OpenRemote(ctx, e.broker.JS, u.Bucket, u.Replicas)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		opened[u.Bucket] = r
		e.log.Info("checkpoint bucket", "setting", key, "bucket", u.Bucket, "replicas", u.Replicas)
		return r, nil
	}
	cks, err := open("state.checkpoints.dir", e.cfg.RemoteCheckpoints())
	if err != nil {
		return err
	}
	sps, err := open("state.savepoints.dir", e.cfg.RemoteSavepoints())
	if err != nil {
		return err
	}
	if cks == nil && sps == nil {
		return nil
	}
	return e.coord.SetRemote(ctx, cks, sps)
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
