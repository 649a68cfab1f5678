package sql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/config"
	"streamdb/sql/front"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/types"

	"gopkg.in/yaml.v3"
	"os"
)

// checkpointColumns is the schema of SHOW CHECKPOINTS and of the system
// table streamdb_checkpoints.
var checkpointColumns = []types.Column{
	{Name: "id", Type: types.Int8},
	{Name: "status", Type: types.Text},
	{Name: "trigger", Type: types.Text},
	{Name: "epoch", Type: types.Int8},
	{Name: "started_at", Type: types.Timestamptz},
	{Name: "completed_at", Type: types.Timestamptz},
	{Name: "duration_ms", Type: types.Float8},
	{Name: "pause_ms", Type: types.Float8},
	{Name: "size_bytes", Type: types.Int8},
	{Name: "new_bytes", Type: types.Int8},
	{Name: "positions", Type: types.Text},
	{Name: "directory", Type: types.Text},
	// location is where the checkpoint is kept for restores on another
	// machine: its bucket object (nats-object://BUCKET/meta/...) when
	// state.checkpoints.dir names a bucket, else the local directory.
	{Name: "location", Type: types.Text},
	{Name: "error", Type: types.Text},
}

// checkpointRows lists the checkpoints this server knows, oldest first.
func (e *Engine) checkpointRows() []types.Row {
	var rows []types.Row
	for _, m := range e.coord.History() {
		if m.Status == "deleted" {
			continue
		}
		completed := types.Null
		if !m.CompletedAt.IsZero() {
			completed = types.NewTime(m.CompletedAt)
		}
		location := m.Location
		if location == "" {
			location = m.Dir
		}
		errText := types.Null
		if m.Error != "" {
			errText = types.NewString(m.Error)
		}
		rows = append(rows, types.Row{
			types.NewInt(int64(m.ID)), types.NewString(m.Status), types.NewString(m.Trigger),
			types.NewInt(int64(m.Epoch)), types.NewTime(m.StartedAt), completed,
			types.NewFloat(float64(time.Duration(m.Duration).Microseconds()) / 1000),
			types.NewFloat(float64(time.Duration(m.Pause).Microseconds()) / 1000),
			types.NewInt(m.SizeBytes), types.NewInt(m.NewBytes),
			types.NewString(formatPositions(m.Positions)), types.NewString(m.Dir), types.NewString(location), errText,
		})
	}
	return rows
}

func formatPositions(ps []checkpoint.Position) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%s/%s=%d", p.View, p.Stream, p.Seq)
	}
	return strings.Join(parts, ", ")
}

// The names of streamdb's system tables: read-only tables computed from
// server state, each built by the function its case below calls.
const (
	sysTableCheckpoints = "streamdb_checkpoints"
	sysTableWatermarks  = "streamdb_watermarks"
	sysTableProgress    = "streamdb_progress"
	sysTableState       = "streamdb_state"
	sysTableOperators   = "streamdb_operators"
)

// systemTable returns the system table name, if it is one.
func (e *Engine) systemTable(name string) (*catalog.Descriptor, func() []types.Row, bool) {
	switch name {
	case sysTableCheckpoints:
		return &catalog.Descriptor{Name: name, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(checkpointColumns)}, e.checkpointRows, true
	case sysTableWatermarks:
		d, rows := e.watermarkTable()
		return d, rows, true
	case sysTableProgress:
		d, rows := e.progressTable()
		return d, rows, true
	case sysTableState:
		d, rows := e.stateTable()
		return d, rows, true
	case sysTableOperators:
		d, rows := e.operatorsTable()
		return d, rows, true
	}
	return e.pgSystemTable(name)
}

func (e *Engine) checkpointNow(ctx context.Context) (string, error) {
	m, err := e.coord.Take(ctx, checkpoint.TriggerManual)
	if err != nil {
		if ctx.Err() != nil {
			return "", sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return "", sqlerr.New(sqlerr.QueryCanceled, "checkpoint %d aborted: %v", m.ID, err).
				WithHint("Raise execution.checkpointing.timeout, or find what slows checkpoints in SHOW CHECKPOINTS.")
		}
		var tooLarge *storage.ErrSnapshotTooLarge
		if asErr(err, &tooLarge) {
			return "", sqlerr.New(sqlerr.InsufficientResources, "checkpoint failed: %v", err)
		}
		return "", sqlerr.New(sqlerr.InternalError, "checkpoint %d failed: %v", m.ID, err)
	}
	return "CHECKPOINT", nil
}

// serverOnlySettings are chosen by whoever runs the server and never by a
// client: directories (a client that could point them elsewhere could make
// the server write, read or delete outside its own directories) and the
// TLS files and policy (a client could turn the TLS requirement off).
// restartSetting reports whether a server setting takes effect only at the
// next start (SET refuses it, ALTER SYSTEM
// SET saves it for then; pg_settings.context "postmaster").
func restartSetting(key string) bool {
	return key == config.StateBackend || key == config.MaxConnections || key == config.MaxQueryLength || serverOnlySettings[key]
}

var serverOnlySettings = map[string]bool{
	config.StateCheckpointsDir: true, config.StateSavepointsDir: true,
	config.SSLCertFile: true, config.SSLKeyFile: true, config.SSLRequireRemote: true,
}

// setServerSetting applies SET / ALTER SYSTEM SET of a server setting; ALTER
// SYSTEM also persists it in the data directory's auto file.
func (e *Engine) setServerSetting(n *front.Set) error {
	e.cfgMu.Lock()
	defer e.cfgMu.Unlock()
	value := n.Value
	if n.Reset {
		value = config.Defaults().Values[n.Name]
	}
	next := e.cfg.Clone()
	if err := next.Set(n.Name, value); err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "%s", err.Error())
	}
	if serverOnlySettings[n.Name] && !n.Reset {
		// As PostgreSQL does for data_directory: 55P02, SET and ALTER
		// SYSTEM SET alike. RESET (back to the default) stays allowed.
		what := "cannot be changed"
		if !n.System {
			what = "cannot be changed without restarting the server"
		}
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q %s", n.Name, what).
			WithHint("This is set only where the server is started: put %s in the --config file or set %s (or the flag), then restart the server.", n.Name, config.EnvName(n.Name))
	}
	restartOnly := restartSetting(n.Name)
	if restartOnly && !n.System && next.Values[n.Name] != e.cfg.Values[n.Name] {
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed without restarting the server", n.Name).
			WithHint("Use ALTER SYSTEM SET and restart, or set it in the --config file.")
	}
	if n.System {
		if err := persistAuto(e.cfg.AutoFile(), n.Name, value, n.Reset); err != nil {
			return sqlerr.New(sqlerr.ConfigFileError, "could not write %s: %v", e.cfg.AutoFile(), err)
		}
	}
	if restartOnly {
		e.log.Info("setting saved; it takes effect at the next start", "key", n.Name, "value", value)
		return nil
	}
	e.cfg.Values[n.Name] = next.Values[n.Name]
	switch n.Name {
	case config.ExecutionBarrierInterval:
		e.rt.SetInterval(e.cfg.Duration(n.Name))
	case config.ExecutionCheckpointingMode:
		e.rt.SetAligned(e.cfg.Values[n.Name] != "at_least_once")
	case config.StateCacheGroupsPerOperator:
		e.rt.SetGroupCache(e.cfg.Int(n.Name))
	case config.StateCacheJoinKeysPerSide:
		e.rt.SetJoinCache(e.cfg.Int(n.Name))
	case config.StateCacheTopNRowsPerOperator:
		e.rt.SetTopNCache(e.cfg.Int(n.Name))
	case config.StateMemoryBudget:
		e.rt.SetMemoryBudget(e.cfg.Int(n.Name))
	case config.SynchronousCommit:
		if warning := e.broker.SetSynchronousCommit(e.cfg.SynchronousCommit()); warning != "" {
			e.log.Warn(warning)
		}
	}
	e.log.Info("setting changed", "key", n.Name, "value", e.cfg.Values[n.Name], "persistent", n.System)
	return nil
}

// persistAuto rewrites the ALTER SYSTEM file with key set (or removed).
func persistAuto(path, key, value string, reset bool) error {
	values := map[string]string{}
	if data, err := os.ReadFile(path); err == nil {
		if err := yaml.Unmarshal(data, &values); err != nil {
			return err
		}
	}
	if reset {
		delete(values, key)
	} else {
		values[key] = value
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append([]byte("# Written by ALTER SYSTEM SET; overrides the --config file.\n"), data...), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
