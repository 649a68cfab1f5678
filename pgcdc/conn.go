package pgcdc

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ParseConfig checks a connection string (a URL or key=value pairs, as
// libpq takes) and returns its configuration.
func ParseConfig(dsn string) (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	return cfg, nil
}

// connectReplication opens a replication connection to dsn's database.
func connectReplication(ctx context.Context, dsn string) (*pgconn.PgConn, error) {
	cfg, err := ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["replication"] = "database"
	cfg.RuntimeParams["application_name"] = "streamdb"
	return pgconn.ConnectConfig(ctx, cfg)
}

// connectSQL opens an ordinary connection to dsn's database.
func connectSQL(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("connection string: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "streamdb"
	return pgx.ConnectConfig(ctx, cfg)
}

// Redact returns dsn with its password replaced, for display.
func Redact(dsn string) string {
	// The parsed password, wherever and however quoted it appears.
	if cfg, err := pgconn.ParseConfig(dsn); err == nil && cfg.Password != "" {
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
