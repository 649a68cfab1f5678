package node

import (
	"os"

	"gopkg.in/yaml.v3"

	"streamdb/checkpoint"
	"streamdb/config"
	"streamdb/sqlerr"
	"streamdb/storage"
)

// Setting reads one setting.
func (n *Node) Setting(key string) string {
	n.cfgMu.RLock()
	defer n.cfgMu.RUnlock()
	return n.cfg.Values[key]
}

// CheckpointSettings reads the current checkpoint settings (the
// coordinator reads them through it before every checkpoint).
func (n *Node) CheckpointSettings() checkpoint.Settings {
	n.cfgMu.RLock()
	defer n.cfgMu.RUnlock()
	c := n.cfg
	s := checkpoint.Settings{
		Interval:             c.Duration(config.ExecutionCheckpointingInterval),
		MinPause:             c.Duration(config.ExecutionCheckpointingMinPause),
		Timeout:              c.Duration(config.ExecutionCheckpointingTimeout),
		MaxConcurrent:        int(c.Int(config.ExecutionCheckpointingMaxConcurrentCheckpoints)),
		TolerableFailures:    int(c.Int(config.ExecutionCheckpointingTolerableFailedCheckpoints)),
		NumRetained:          int(c.Int(config.StateCheckpointsNumRetained)),
		RetainOnCancellation: c.Values[config.ExecutionCheckpointingExternalizedCheckpointRetention] != "delete_on_cancellation",
		Async:                c.Bool(config.StateBackendAsync),
		Incremental:          c.Bool(config.StateBackendIncremental),
		ViewGroups:           c.Bool(config.StateCheckpointsViewGroups) || c.Cluster != "",
		Backend:              c.Values[config.StateBackend],
		MemoryLimit:          c.Int(config.StateBackendMemoryMaxSize),
		Dir:                  c.CheckpointsDir(),
		SavepointsDir:        c.SavepointsDir(),
		DataDir:              c.DataDir,
	}
	if n.fence != nil {
		s.Fence = n.confirmFence
	}
	return s
}

// RestartSetting reports whether a server setting takes effect only at the
// next start (SET refuses it, ALTER SYSTEM SET saves it for then;
// pg_settings.context "postmaster").
func RestartSetting(key string) bool {
	return key == config.StateBackend || key == config.MaxConnections || key == config.SuperuserReservedConnections || key == config.MaxQueryLength ||
		key == config.HTTPIdleTimeout || key == config.HTTPMaxConnections || serverOnlySettings[key]
}

// serverOnlySettings are chosen by whoever runs the server and never by a
// client: directories (a client that could point them elsewhere could make
// the server write, read or delete outside its own directories) and the
// TLS files and policy (a client could turn the TLS requirement off), and
// the names the console answers to (a client could open it to another
// site's pages), and the directory schema files are read from (a client
// could read any file the server can).
var serverOnlySettings = map[string]bool{
	config.StateCheckpointsDir: true, config.StateSavepointsDir: true,
	config.SSLCertFile: true, config.SSLKeyFile: true, config.SSLRequireRemote: true,
	config.HTTPPublicHost: true, config.FormatSchemaDir: true,
}

// SettingChange is a SET, RESET or ALTER SYSTEM SET of a server setting.
type SettingChange struct {
	Key   string
	Value string
	// Reset sets the default (Value is ignored).
	Reset bool
	// System is ALTER SYSTEM: the change is also saved in the data
	// directory's auto file, and a setting that takes effect only at the
	// next start is saved for then.
	System bool
}

// ChangeSetting applies c: it checks the value, saves it for ALTER
// SYSTEM, and hands a setting the running server follows to the
// runtime or the broker. Errors carry a SQLSTATE.
func (n *Node) ChangeSetting(c SettingChange) error {
	n.cfgMu.Lock()
	defer n.cfgMu.Unlock()
	value := c.Value
	if c.Reset {
		value = config.Defaults().Values[c.Key]
	}
	next := n.cfg.Clone()
	if err := next.Set(c.Key, value); err != nil {
		return sqlerr.New(sqlerr.InvalidParameterValue, "%s", err.Error())
	}
	if serverOnlySettings[c.Key] && !c.Reset {
		// As PostgreSQL does for data_directory: 55P02, SET and ALTER
		// SYSTEM SET alike. RESET (back to the default) stays allowed.
		what := "cannot be changed"
		if !c.System {
			what = "cannot be changed without restarting the server"
		}
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q %s", c.Key, what).
			WithHint("This is set only where the server is started: put %s in the --config file or set %s (or the flag), then restart the server.", c.Key, config.EnvName(c.Key))
	}
	restartOnly := RestartSetting(c.Key)
	if restartOnly && !c.System && next.Values[c.Key] != n.cfg.Values[c.Key] {
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed without restarting the server", c.Key).
			WithHint("Use ALTER SYSTEM SET and restart, or set it in the --config file.")
	}
	if c.System {
		if err := persistAuto(n.cfg.AutoFile(), c.Key, value, c.Reset); err != nil {
			return sqlerr.New(sqlerr.ConfigFileError, "could not write %s: %v", n.cfg.AutoFile(), err)
		}
	}
	if restartOnly {
		n.log.Info("setting saved; it takes effect at the next start", "key", c.Key, "value", value)
		return nil
	}
	n.cfg.Values[c.Key] = next.Values[c.Key]
	switch c.Key {
	case config.ExecutionBarrierInterval:
		n.rt.SetInterval(n.cfg.Duration(c.Key))
	case config.ExecutionCheckpointingMode:
		n.rt.SetAligned(n.cfg.Values[c.Key] != "at_least_once")
	case config.StateCacheGroupsPerOperator:
		n.rt.SetGroupCache(n.cfg.Int(c.Key))
	case config.StateCacheJoinKeysPerSide:
		n.rt.SetJoinCache(n.cfg.Int(c.Key))
	case config.StateCacheTopNRowsPerOperator:
		n.rt.SetTopNCache(n.cfg.Int(c.Key))
	case config.StateMemoryBudget:
		n.rt.SetMemoryBudget(n.cfg.Int(c.Key))
	case config.QueryMaxMemoryTotal:
		n.queryPool.SetLimit(n.cfg.Int(c.Key))
	case config.StateEpochMaxMemory:
		n.rt.SetEpochMemoryLimit(n.cfg.Int(c.Key))
	case config.ScanWatermarkAlignmentMaxDrift:
		n.rt.SetAlignmentDrift(n.cfg.Duration(c.Key))
	case config.SynchronousCommit:
		if warning := n.broker.SetSynchronousCommit(n.cfg.SynchronousCommit()); warning != "" {
			n.log.Warn(warning)
		}
	}
	n.log.Info("setting changed", "key", c.Key, "value", n.cfg.Values[c.Key], "persistent", c.System)
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
	return storage.WriteFileSynced(path, append([]byte("# Written by ALTER SYSTEM SET; overrides the --config file.\n"), data...), 0o644)
}
