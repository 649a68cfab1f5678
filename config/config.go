// Package config holds the server's settings: command-line flags, the
// optional YAML file (flat keys as in flink-conf.yaml), and environment
// variables, in that order of strength.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Setting describes one tunable key.
type Setting struct {
	Key         string
	Default     string
	Description string
}

// Settings lists every key the server knows, with its default.
var Settings = []Setting{
	{ExecutionBarrierInterval, "20ms", "time between barriers; each barrier commits an epoch that SELECT then sees"},
	{ExecutionProgressInterval, "5s", "how often a long wait (a CREATE MATERIALIZED VIEW's backfill, FLUSH) reports its progress: a NOTICE to the client for a backfill, and a log line"},
	{ExecutionCheckpointingInterval, "1s", "time between checkpoint starts; 0 turns periodic checkpoints off"},
	{ExecutionCheckpointingMode, "exactly_once", "exactly_once (aligned barriers) or at_least_once"},
	{ExecutionCheckpointingMinPause, "0", "least time from one checkpoint's end to the next one's start"},
	{ExecutionCheckpointingTimeout, "60s", "a checkpoint not complete by then is aborted"},
	{ExecutionCheckpointingMaxConcurrentCheckpoints, "1", "checkpoints in flight at once"},
	{ExecutionCheckpointingTolerableFailedCheckpoints, "3", "failures in a row before the server reports itself unhealthy"},
	{ExecutionCheckpointingExternalizedCheckpointRetention, "retain_on_cancellation", "whether checkpoints survive a clean shutdown"},
	{ExecutionCheckpointingPreferCheckpointForRecovery, "false", "on restart, use the newest checkpoint even where a newer savepoint exists"},
	{StateBackend, "pebble", "pebble or memory"},
	{StateBackendIncremental, "true", "checkpoints share files with earlier ones"},
	{StateCheckpointsViewGroups, "false", "each checkpoint also exports every view-group's state with a task manifest, so that one group can be restored on another server (always on with --cluster)"},
	{StateBackendMemoryMaxSize, "268435456", "memory backend: largest state a checkpoint may snapshot, in bytes"},
	{StateCacheGroupsPerOperator, "131072", "aggregate groups (and rows of views without a key) an operator keeps in memory (0: all); the rest are read from Pebble when touched"},
	{StateCacheJoinKeysPerSide, "16384", "join keys each side of a join keeps in memory with their rows (0: all), for views created with this release or later; the rest are read from Pebble when a row with that key arrives"},
	{StateCacheTopNRowsPerOperator, "16384", "rows a top-N over a retracting input keeps in memory (0: all), for views created with this release or later; the rest are read from Pebble when its ranked rows need them"},
	{StateMemoryBudget, "536870912", "bytes of memory the state caches share (0: no budget): a quarter is Pebble's block cache (64 MiB without a budget); of the rest caches that hold little keep what they hold and the others split what is left equally (counted at an estimated size per entry), each keeping the lower of its share and its own setting; the garbage collector lets the heap grow past its live part by at most the budget (at least by the live heap)"},
	{ScanWatermarkAlignmentMaxDrift, "10s", "how far in event time a reader of a stream with a WATERMARK may run ahead of the readers of the other watermarked streams its views read, while they still have input to read (0: no bound); a reader that far ahead waits, so that join and window state freed by the slower watermark does not pile up while views catch up"},
	{StateBackendAsync, "true", "processing goes on while a checkpoint is written"},
	{StateCheckpointsDir, "", "where checkpoints go (default <data dir>/checkpoints); nats-object://BUCKET[?replicas=N] uploads each one to a JetStream object store bucket on the server's NATS connection"},
	{StateCheckpointsNumRetained, "3", "completed periodic checkpoints kept"},
	{StateSavepointsDir, "", "where savepoints go (default <data dir>/savepoints); nats-object://BUCKET[?replicas=N] uploads each one to a bucket"},
	{SSLCertFile, "", "PEM certificate (chain) for TLS; with ssl_key_file the server accepts sslmode=require (flag --tls-cert); read at start"},
	{SSLKeyFile, "", "PEM private key of ssl_cert_file (flag --tls-key); read at start"},
	{SSLRequireRemote, "false", "refuse connections that did not negotiate TLS unless they come from loopback (28000); needs ssl_cert_file (flag --tls-require-remote); read at start"},
	{MaxQueryLength, "16777216", "longest statement text a client may send, in bytes (0: the protocol's own bound of 1 GB); a longer Query or Parse is refused with 54001 and the session goes on; read at start"},
	{StateEpochMaxMemory, "2147483648", "bytes one materialized view may hold of the changes of one epoch before they are written to Pebble (0: no bound); a view past it (a cross join, say) stops with 53200, and its CREATE fails and leaves nothing"},
	{QueryMaxMemoryTotal, "2147483648", "bytes of rows that all ad-hoc queries running at once may build together (0: no bound), besides each session's query_max_memory; a query that would pass it is refused with 53200"},
	{MaxConnections, "100", "most client sessions at once (0: no bound); one more is refused with 53300, cancel requests always get through; read at start"},
	{HTTPIdleTimeout, "60s", "the HTTP endpoint (--http-listen) closes a keep-alive connection that waits this long for its next request; read at start"},
	{HTTPMaxConnections, "64", "most connections the HTTP endpoint holds at once (at least 1); at the bound it closes an idle keep-alive connection to take a new one, or has the new one wait; read at start"},
	{SuperuserReservedConnections, "3", "of max_connections, the sessions kept for superusers: a role without SUPERUSER is refused with 53300 once fewer slots than this are free; must be less than max_connections; read at start"},
	{NatsStreamReplicas, "0", "replicas of the JetStream streams the server creates (for a CREATE STREAM whose subject no stream holds, and for tables' changelogs) on a NATS cluster, 1 to 5; 0: --ha-replicas for a server of an --ha-group, else 1; read at start"},
	{HTTPPublicHost, "", "comma-separated names (name or name:port) the web console answers to besides IP addresses and localhost with the --http-listen port, e.g. the name of a proxy in front of it; a request naming any other host is refused, so that a page of another site whose name resolves to this server cannot use the console (flag --http-public-host); read at start"},
	{FormatSchemaDir, "", "the directory CREATE STREAM ... WITH (schema_file = '...') reads Protobuf descriptor sets and Avro schemas from (default <data dir>/schemas); a schema_file names a file under it, never outside (flag --schema-dir); read at start"},
	{SynchronousCommit, "on", "on: a write acknowledged over SQL (INSERT, UPDATE, DELETE, COMMIT) is fsynced first and survives an OS crash; off: it survives a crash of the process only, and writes are faster"},
}

// Config is the server's configuration.
type Config struct {
	Listen     string
	DataDir    string
	NATSListen string
	NATSURL    string
	// HTTPListen is the address of the metrics and health endpoint
	// (package admin); empty turns it off.
	HTTPListen string
	// Pprof serves Go's profiles on the HTTP endpoint.
	Pprof bool
	// LogLevel (debug, info, warn, error) and LogFormat (text, json)
	// configure the server's log on stderr.
	LogLevel    string
	LogFormat   string
	ConfigFile  string
	RestoreFrom string
	// PasswordFile is the file holding the bootstrap superuser's password
	// (--password-file); it is read once at start.
	PasswordFile string
	// NATSProducerPasswordFile is the file holding the password of the
	// embedded NATS server's producer user (--nats-producer-password-file);
	// see NATSProducerPassword.
	NATSProducerPasswordFile string
	// SecretKeyFile is the file holding the key CREATE SECRET values are
	// encrypted with (--secret-key-file); empty: SecretKeyPath's default.
	SecretKeyFile string
	// Clustering is the server's cluster and node name (cluster.go).
	Clustering
	// Replaying is --replay-control's (replay.go).
	Replaying
	// Values holds every setting of Settings by key, as text.
	Values map[string]string
}

// Defaults returns the configuration of a server started with no flags.
func Defaults() *Config {
	c := &Config{
		Listen:     "127.0.0.1:5433",
		DataDir:    "./streamdb-data",
		NATSListen: "127.0.0.1:4222",
		HTTPListen: "127.0.0.1:5480",
		LogLevel:   "info",
		LogFormat:  "text",
		Values:     map[string]string{},
	}
	for _, s := range Settings {
		c.Values[s.Key] = s.Default
	}
	return c
}

// Known reports whether key is a setting.
func Known(key string) bool {
	for _, s := range Settings {
		if s.Key == key {
			return true
		}
	}
	return false
}

// LoadFile merges a YAML file of flat keys (values as scalars).
func (c *Config) LoadFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read config file: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := c.Set(k, fmt.Sprint(raw[k])); err != nil {
			return fmt.Errorf("config file %s: %w", path, err)
		}
	}
	return nil
}

// LoadEnv merges STREAMDB_* environment variables: a key's dots and dashes
// become underscores, upper case (STREAMDB_EXECUTION_BARRIER_INTERVAL).
func (c *Config) LoadEnv(getenv func(string) string) error {
	c.loadClusterEnv(getenv)
	for _, s := range Settings {
		if v := getenv(EnvName(s.Key)); v != "" {
			if err := c.Set(s.Key, v); err != nil {
				return fmt.Errorf("environment %s: %w", EnvName(s.Key), err)
			}
		}
	}
	return nil
}

// EnvName is the environment variable that sets key.
func EnvName(key string) string {
	r := strings.NewReplacer(".", "_", "-", "_")
	return "STREAMDB_" + strings.ToUpper(r.Replace(key))
}

// Set validates and stores one setting.
func (c *Config) Set(key, value string) error {
	if !Known(key) {
		return fmt.Errorf("unrecognized configuration parameter %q", key)
	}
	if err := validate(key, value); err != nil {
		return fmt.Errorf("invalid value for %s: %w", key, err)
	}
	c.Values[key] = value
	return nil
}

// validate checks a value against its key's type.
func validate(key, value string) error {
	oneOf := func(allowed ...string) error {
		for _, a := range allowed {
			if value == a {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", value, strings.Join(allowed, ", "))
	}
	switch key {
	case "http.idle-timeout":
		d, err := ParseDuration(value)
		if err != nil {
			return err
		}
		if d < time.Millisecond {
			return fmt.Errorf("%s is out of range: use a duration of at least 1ms", value)
		}
	case "http.max-connections":
		var n int64
		if _, err := fmt.Sscanf(value, "%d", &n); err != nil || fmt.Sprint(n) != value || n < 1 {
			return fmt.Errorf("%q is not a positive integer", value)
		}
	case "execution.barrier.interval", "execution.checkpointing.interval", "execution.checkpointing.timeout", "execution.checkpointing.min-pause", "execution.progress.interval", "scan.watermark.alignment.max-drift":
		d, err := ParseDuration(value)
		if err != nil {
			return err
		}
		if d < 0 || ((key == "execution.barrier.interval" || key == "execution.progress.interval") && d < time.Millisecond) {
			return fmt.Errorf("%s is out of range", value)
		}
	case "execution.checkpointing.mode":
		return oneOf("exactly_once", "at_least_once")
	case "execution.checkpointing.externalized-checkpoint-retention":
		return oneOf("retain_on_cancellation", "delete_on_cancellation")
	case "state.backend":
		return oneOf("pebble", "memory")
	case "synchronous_commit":
		// PostgreSQL's values; with one server, local and remote_* are on.
		return oneOf("on", "off", "local", "remote_write", "remote_apply", "true", "false")
	case "execution.checkpointing.prefer-checkpoint-for-recovery", "state.backend.incremental", "state.backend.async", "ssl_require_remote", "state.checkpoints.view-groups":
		return oneOf("true", "false")
	case "execution.checkpointing.max-concurrent-checkpoints", "execution.checkpointing.tolerable-failed-checkpoints",
		"state.checkpoints.num-retained", "state.backend.memory.max-size", "state.cache.groups-per-operator", "state.cache.join-keys-per-side", "state.cache.topn-rows-per-operator", "state.memory.budget", "query.max-memory-total", "state.epoch.max-memory", "max_connections", "superuser_reserved_connections", "max_query_length", "nats.stream-replicas":
		var n int64
		if _, err := fmt.Sscanf(value, "%d", &n); err != nil || fmt.Sprint(n) != value || n < 0 {
			return fmt.Errorf("%q is not a non-negative integer", value)
		}
		if n == 0 && (key == "execution.checkpointing.max-concurrent-checkpoints" || key == "state.checkpoints.num-retained") {
			return fmt.Errorf("must be at least 1")
		}
		if key == "nats.stream-replicas" && n > 5 {
			return fmt.Errorf("JetStream keeps at most 5 replicas of a stream")
		}
	}
	return nil
}

// Int returns an integer setting.
func (c *Config) Int(key string) int64 {
	var n int64
	fmt.Sscanf(c.Values[key], "%d", &n)
	return n
}

// Bool returns a boolean setting.
func (c *Config) Bool(key string) bool {
	switch strings.ToLower(c.Values[key]) {
	case "true", "on", "yes", "1":
		return true
	}
	return false
}

// SynchronousCommit reports whether synchronous_commit is on (any value
// but off and false).
func (c *Config) SynchronousCommit() bool {
	v := c.Values["synchronous_commit"]
	return v != "off" && v != "false"
}

// Duration returns a duration setting.
func (c *Config) Duration(key string) time.Duration {
	d, _ := ParseDuration(c.Values[key])
	return d
}

// ParseDuration reads Go durations and a bare number of milliseconds ("0").
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var ms int64
	if _, err := fmt.Sscanf(s, "%d", &ms); err == nil && fmt.Sprint(ms) == s {
		return time.Duration(ms) * time.Millisecond, nil
	}
	return time.ParseDuration(s)
}

// RemoteScheme starts a state.checkpoints.dir or state.savepoints.dir
// that names a JetStream object store bucket (package checkpoint parses
// it) instead of a directory.
const RemoteScheme = "nats-object://"

// CheckpointsDir is the local directory checkpoints are written to:
// state.checkpoints.dir, or <data dir>/checkpoints when that is unset or
// names a bucket (checkpoints are then written here first and uploaded).
func (c *Config) CheckpointsDir() string {
	if d := c.Values["state.checkpoints.dir"]; d != "" && !strings.HasPrefix(d, RemoteScheme) {
		return d
	}
	return filepath.Join(c.DataDir, "checkpoints")
}

// SavepointsDir is the local directory savepoints are written to, as
// CheckpointsDir.
func (c *Config) SavepointsDir() string {
	if d := c.Values["state.savepoints.dir"]; d != "" && !strings.HasPrefix(d, RemoteScheme) {
		return d
	}
	return filepath.Join(c.DataDir, "savepoints")
}

// RemoteCheckpoints is state.checkpoints.dir when it names a bucket
// (nats-object://...), else "".
func (c *Config) RemoteCheckpoints() string { return c.remote("state.checkpoints.dir") }

// RemoteSavepoints is state.savepoints.dir when it names a bucket, else "".
func (c *Config) RemoteSavepoints() string { return c.remote("state.savepoints.dir") }

func (c *Config) remote(key string) string {
	if d := c.Values[key]; strings.HasPrefix(d, RemoteScheme) {
		return d
	}
	return ""
}

// AutoFile is where ALTER SYSTEM SET persists settings.
func (c *Config) AutoFile() string { return filepath.Join(c.DataDir, "streamdb.auto.yaml") }

// Clone copies the configuration.
func (c *Config) Clone() *Config {
	out := *c
	out.Values = make(map[string]string, len(c.Values))
	for k, v := range c.Values {
		out.Values[k] = v
	}
	return &out
}

// SchemaDir is the directory stream schema files are read from:
// format.schema-dir, or <data dir>/schemas when that is unset.
func (c *Config) SchemaDir() string {
	if d := c.Values[FormatSchemaDir]; d != "" {
		return d
	}
	return filepath.Join(c.DataDir, "schemas")
}

// StateDir is the Pebble directory.
func (c *Config) StateDir() string { return filepath.Join(c.DataDir, "state") }

// SecretKeyPath is the key file of CREATE SECRET values: SecretKeyFile,
// or <data dir>/secret.key (made at first use) when that is unset.
func (c *Config) SecretKeyPath() (path string, given bool) {
	if c.SecretKeyFile != "" {
		return c.SecretKeyFile, true
	}
	return filepath.Join(c.DataDir, "secret.key"), false
}

// NATSDir is the embedded NATS server's JetStream store.
func (c *Config) NATSDir() string { return filepath.Join(c.DataDir, "nats") }

// NATSProducerPasswordEnv sets the embedded NATS server's producer password.
const NATSProducerPasswordEnv = "STREAMDB_NATS_PRODUCER_PASSWORD"

// NATSProducerPassword returns the embedded NATS server's producer password
// from NATSProducerPasswordFile (its first line) or STREAMDB_NATS_PRODUCER_PASSWORD,
// or "" when neither is set (the server then makes one). Setting both is an
// error. The environment variable is cleared once read.
func (c *Config) NATSProducerPassword() (string, error) {
	env := os.Getenv(NATSProducerPasswordEnv)
	os.Unsetenv(NATSProducerPasswordEnv)
	if c.NATSProducerPasswordFile == "" {
		return env, nil
	}
	if env != "" {
		return "", fmt.Errorf("both %s and --nats-producer-password-file are set; use one", NATSProducerPasswordEnv)
	}
	data, err := os.ReadFile(c.NATSProducerPasswordFile)
	if err != nil {
		return "", fmt.Errorf("read NATS producer password file: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("NATS producer password file %s is empty", c.NATSProducerPasswordFile)
	}
	return line, nil
}
