package pgcdc

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// allowedKeys are the connection string keys a client may give. The
// keys that make the parser read a file of the server's machine
// (sslrootcert, sslcert, sslkey, passfile, service, servicefile) are left
// out, as is everything pgconn would send to the source as a run-time
// parameter: a connection string comes from a client, and nothing a
// client sends may name a path outside the server's own directories.
// Certificates come instead as PEM text in an Endpoint's TLS.
var allowedKeys = []string{
	"host", "port", "dbname", "user", "password", "connect_timeout",
	"sslmode", "ssl", "sslsni", "sslnegotiation", "target_session_attrs",
	"channel_binding", "require_auth", "min_protocol_version", "max_protocol_version",
	"krbsrvname", "krbspn", "application_name", "options",
}

// KeyRefusedError is a connection string key streamdb does not take;
// File says the key names a file of the server's machine.
type KeyRefusedError struct {
	Key  string
	File bool
}

// fileKeys make the parser read a file.
var fileKeys = map[string]bool{"sslrootcert": true, "sslcert": true, "sslkey": true, "sslcrl": true,
	"sslcrldir": true, "passfile": true, "service": true, "servicefile": true}

// AllowedKeys lists the keys a connection string may hold, for messages.
func AllowedKeys() string { return strings.Join(allowedKeys, ", ") }

func (e *KeyRefusedError) Error() string {
	return fmt.Sprintf("connection string key %q is not accepted", e.Key)
}

// refusedKey is how pgconn names a key outside ConnStringAllowedKeys.
var refusedKey = regexp.MustCompile(`connection string key "([^"]+)" is not in ConnStringAllowedKeys`)

func parseOptions() pgconn.ParseConfigOptions {
	return pgconn.ParseConfigOptions{ConnStringAllowedKeys: allowedKeys}
}

// parseError turns a refused key into a KeyRefusedError.
func parseError(err error) error {
	if m := refusedKey.FindStringSubmatch(err.Error()); m != nil {
		return &KeyRefusedError{Key: m[1], File: fileKeys[m[1]]}
	}
	return fmt.Errorf("connection string: %w", err)
}

// ParseConfig checks a connection string (a URL or key=value pairs, as
// libpq takes, limited to allowedKeys) and returns its configuration.
func ParseConfig(dsn string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfigWithOptions(dsn, parseOptions())
	if err != nil {
		return nil, parseError(err)
	}
	return cfg, nil
}

// Endpoint is how to reach a source database: its connection string
// and the TLS material that goes with it.
type Endpoint struct {
	DSN string
	TLS TLS
}

// config parses e's connection string and applies its TLS material.
func (e Endpoint) config() (*pgconn.Config, error) {
	cfg, err := ParseConfig(e.DSN)
	if err != nil {
		return nil, err
	}
	if err := applyTLS(cfg, e.TLS); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Check reports what is wrong with e before any connection is tried: a
// refused key (KeyRefusedError), TLS material that cannot be used
// (TLSError) or that the connection string's sslmode would not use
// (TLSModeError), or a connection string that does not parse.
func (e Endpoint) Check() error {
	_, err := e.config()
	return err
}

// connectReplication opens a replication connection to e's database.
func connectReplication(ctx context.Context, e Endpoint) (*pgconn.PgConn, error) {
	cfg, err := e.config()
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["replication"] = "database"
	cfg.RuntimeParams["application_name"] = "streamdb"
	return pgconn.ConnectConfig(ctx, cfg)
}

// connectSQL opens an ordinary connection to e's database.
func connectSQL(ctx context.Context, e Endpoint) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfigWithOptions(e.DSN, pgx.ParseConfigOptions{ParseConfigOptions: parseOptions()})
	if err != nil {
		return nil, parseError(err)
	}
	if err := applyTLS(&cfg.Config, e.TLS); err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = "streamdb"
	return pgx.ConnectConfig(ctx, cfg)
}

// Redact returns dsn with its password replaced, for display.
func Redact(dsn string) string {
	// The parsed password, wherever and however quoted it appears.
	if cfg, err := ParseConfig(dsn); err == nil && cfg.Password != "" {
		dsn = strings.ReplaceAll(dsn, cfg.Password, "xxxxx")
	}
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		q := u.Query()
		if q.Has("password") {
			q.Set("password", "xxxxx")
			u.RawQuery = q.Encode()
		}
		return u.String()
	}
	var out []string
	for _, f := range strings.Fields(dsn) {
		if k, _, ok := strings.Cut(f, "="); ok && strings.EqualFold(strings.TrimSpace(k), "password") {
			f = k + "=xxxxx"
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// WithPassword returns dsn with password as its password, in place of
// one it holds.
func WithPassword(dsn, password string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		if q.Has("password") {
			q.Del("password")
			u.RawQuery = q.Encode()
		}
		u.User = url.UserPassword(u.User.Username(), password)
		return u.String()
	}
	// A later keyword=value pair wins over an earlier one.
	quoted := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(password)
	return strings.TrimSpace(dsn) + " password='" + quoted + "'"
}
