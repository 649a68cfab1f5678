package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"streamdb/admin"
	"streamdb/config"
	"streamdb/metrics"
	"streamdb/pgwire"
	"streamdb/sql"
)

// newLogger is the server's log on w, at cfg.LogLevel in cfg.LogFormat.
func newLogger(cfg *config.Config, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", cfg.LogLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(cfg.LogFormat) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", cfg.LogFormat)
}

// startHTTP serves metrics and health on cfg.HTTPListen, or returns nil
// when it is empty (turned off). It starts before the engine opens, so that
// /healthz answers during a long recovery while /readyz says it is not
// done: opened receives the engine once it is. A server of a group that
// is not active (hs) is not ready either: /readyz names the active server.
// With a password set (auth), /metrics asks for a login.
func startHTTP(cfg *config.Config, hs *haState, auth pgwire.Authenticator, log *slog.Logger) (srv *admin.Server, opened func(*sql.Engine), err error) {
	if cfg.HTTPListen == "" {
		return nil, func(*sql.Engine) {}, nil
	}
	var engine atomic.Pointer[sql.Engine]
	ready := func(ctx context.Context) error {
		if err := hs.notReady(); err != nil {
			return err
		}
		e := engine.Load()
		if e == nil {
			return errors.New("recovering: the engine is not open yet")
		}
		return e.Ready(ctx)
	}
	srv, err = admin.Listen(cfg.HTTPListen, admin.Options{Ready: ready, Pprof: cfg.Pprof, Log: log, Auth: auth,
		IdleTimeout: cfg.Duration(config.HTTPIdleTimeout), MaxConnections: int(cfg.Int(config.HTTPMaxConnections))})
	if err != nil {
		return nil, nil, err
	}
	log.Info("HTTP endpoint listening", "listen", srv.Addr(), "metrics", "/metrics", "health", "/healthz /readyz", "pprof", cfg.Pprof)
	return srv, func(e *sql.Engine) {
		metrics.RegisterPebble(e.Node().PebbleDB)
		e.RegisterMetrics()
		engine.Store(e)
	}, nil
}
