package node

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"streamdb/broker"
	"streamdb/checkpoint"
	"streamdb/config"
	"streamdb/storage"
)

// openState opens the state store, first restoring a checkpoint into it
// when --restore-from names one, or after an unclean shutdown (the newest
// usable checkpoint; damaged or half-written ones are skipped). The memory
// backend starts from the newest checkpoint every time.
func openState(ctx context.Context, cfg *config.Config, b *broker.Broker, log *slog.Logger) (*storage.Store, error) {
	memory := cfg.Values[config.StateBackend] == "memory"
	_, markerErr := os.Stat(filepath.Join(cfg.DataDir, runningMarker))
	damage := readDamage(cfg.DataDir)
	unclean := markerErr == nil || damage != ""
	var from *checkpoint.Meta
	// Points downloaded from a bucket go to a scratch directory, removed
	// once the state is restored (RestoreState hard-links what it keeps).
	scratch := filepath.Join(cfg.DataDir, remoteScratch)
	os.RemoveAll(scratch)
	defer os.RemoveAll(scratch)
	switch {
	case checkpoint.IsRemote(cfg.RestoreFrom):
		m, err := fetchRemotePoint(ctx, cfg.RestoreFrom, b, scratch)
		if err == nil && m == nil {
			err = fmt.Errorf("%s holds no whole checkpoint", cfg.RestoreFrom)
		}
		if err != nil {
			return nil, fmt.Errorf("--restore-from: %w", err)
		}
		from = m
	case cfg.RemoteCheckpoints() != "" && freshDataDir(cfg, memory):
		// A new machine (or a lost data directory): start from the
		// newest whole checkpoint in the bucket, if it holds one.
		m, err := fetchRemotePoint(ctx, cfg.RemoteCheckpoints(), b, scratch)
		if err != nil {
			return nil, fmt.Errorf("state.checkpoints.dir: %w", err)
		}
		if m == nil {
			log.Info("checkpoint bucket holds no checkpoint: starting empty", "bucket", cfg.RemoteCheckpoints())
		}
		from = m
	case cfg.RestoreFrom != "":
		m, err := checkpoint.Verify(cfg.RestoreFrom)
		if err != nil {
			return nil, fmt.Errorf("--restore-from: %w", err)
		}
		from = m
	case unclean || memory:
		// The newest usable checkpoint in any directory the server has
		// used (or a newer savepoint), never older than the last DDL.
		m, err := checkpoint.ChooseRecovery(checkpoint.RecoveryOptions{
			DataDir: cfg.DataDir, CheckpointsDir: cfg.CheckpointsDir(), SavepointsDir: cfg.SavepointsDir(),
			PreferCheckpoint: cfg.Bool(config.ExecutionCheckpointingPreferCheckpointForRecovery),
		}, log)
		if err != nil {
			return nil, err
		}
		from = m
		if unclean && m == nil && !memory {
			if damage != "" {
				return nil, fmt.Errorf("the live state is damaged (%s) and no intact checkpoint or savepoint is left to recover from: start with --restore-from <a checkpoint or savepoint directory> (one copied from another machine will do), or move %s and %s away to start with no state",
					damage, cfg.StateDir(), filepath.Join(cfg.DataDir, damageMarker))
			}
			log.Warn("unclean shutdown and no usable checkpoint: recovering from the live state directory")
		}
	}
	if from != nil {
		log.Info("recovering from checkpoint", "dir", from.Dir, "id", from.ID, "epoch", from.Epoch, "taken", from.CompletedAt)
	}
	if memory {
		store, err := storage.OpenMemory()
		if err != nil || from == nil {
			return store, err
		}
		start := time.Now()
		if err := store.ImportSnapshot(filepath.Join(from.Dir, checkpoint.StateDir)); err != nil {
			store.Close()
			return nil, fmt.Errorf("restore %s: %w", from.Dir, err)
		}
		log.Info("restored state", "took", time.Since(start))
		return store, nil
	}
	if from != nil {
		start := time.Now()
		if from.Backend == "memory" {
			return nil, fmt.Errorf("%s is a memory-backend snapshot; start with state.backend = memory to restore it", from.Dir)
		}
		if err := checkpoint.RestoreState(from, cfg.StateDir()); err != nil {
			return nil, fmt.Errorf("restore %s: %w", from.Dir, err)
		}
		log.Info("restored state", "took", time.Since(start))
	}
	store, err := storage.Open(cfg.StateDir())
	switch {
	case err != nil && storage.IsCorruption(err) && damage == "" && cfg.RestoreFrom == "":
		// Damaged files found at open: recover as after damage found
		// while running.
		log.Error("the live state's files are damaged: recovering from the newest intact checkpoint", "err", err)
		if merr := markDamaged(cfg.DataDir, err); merr != nil {
			return nil, fmt.Errorf("%w (and the damage marker could not be written: %v)", err, merr)
		}
		return openState(ctx, cfg, b, log)
	case err == nil && damage != "" && from != nil:
		recoveredFromDamage(cfg.DataDir, damage, from.Dir, log)
	}
	return store, err
}
