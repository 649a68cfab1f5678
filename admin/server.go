// Package admin serves the server's HTTP endpoints (--http-listen):
// Prometheus metrics, liveness and readiness probes, the web console at
// /, and, when enabled, Go's pprof profiles.
package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"streamdb/metrics"
	"streamdb/pgwire"
)

// Readiness reports whether the server can serve queries: recovery is
// done and epochs commit. It returns nil when ready, or why it is not.
type Readiness func(ctx context.Context) error

// Options configure the endpoints.
type Options struct {
	// Ready is asked by /readyz; nil means ready once the server listens.
	Ready Readiness
	// Pprof serves /debug/pprof/ (profiles expose internals: off by default).
	Pprof bool
	// Auth, when set (the server has a password), makes /metrics and the
	// profiles ask for an HTTP Basic login as a user of the PostgreSQL
	// port, as the console does; once SetConsole is called its Auth,
	// which knows every user, is used instead. Without it they are open
	// (the endpoint listens on loopback unless told otherwise).
	Auth pgwire.Authenticator
	// IdleTimeout closes a keep-alive connection that has waited this long
	// for its next request; 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConnections bounds the connections held at once (limit.go); 0
	// means DefaultMaxConnections.
	MaxConnections int
	Log            *slog.Logger
}

// The defaults of Options (the settings http.idle-timeout and
// http.max-connections).
const (
	DefaultIdleTimeout    = 60 * time.Second
	DefaultMaxConnections = 64
)

// readTimeout bounds the reading of one request, body included (the
// console posts small forms); readHeaderTimeout bounds its headers, and
// so also how long a new connection may stay silent.
const (
	readTimeout       = 30 * time.Second
	readHeaderTimeout = 10 * time.Second
)

// Server is the HTTP endpoint.
type Server struct {
	http    *http.Server
	ln      *limitListener
	log     *slog.Logger
	console *console
	auth    pgwire.Authenticator // Options.Auth
}

// loggedIn has h answer only requests that log in, when the server has a
// password (Options.Auth).
func (s *Server) loggedIn(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := s.auth
		if a := s.console.access.Load(); a != nil {
			auth = a.Auth
		}
		if auth != nil {
			if _, ok := basicLogin(w, r, auth); !ok {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Listen starts serving on addr ("host:port").
func Listen(addr string, opts Options) (*Server, error) {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s for HTTP: %w (choose another address with --http-listen, or turn it off with --http-listen '')", addr, err)
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	ln := newLimitListener(tcp, opts.MaxConnections)
	mux := http.NewServeMux()
	s := &Server{log: opts.Log, console: newConsole(), auth: opts.Auth}
	mux.Handle("GET /metrics", s.loggedIn(promhttp.HandlerFor(metrics.Registry, promhttp.HandlerOpts{ErrorLog: slogErrorLog{opts.Log}})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if opts.Ready != nil {
			if err := opts.Ready(ctx); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	if opts.Pprof {
		mux.Handle("/debug/pprof/", s.loggedIn(http.HandlerFunc(pprof.Index)))
		mux.Handle("/debug/pprof/cmdline", s.loggedIn(http.HandlerFunc(pprof.Cmdline)))
		mux.Handle("/debug/pprof/profile", s.loggedIn(http.HandlerFunc(pprof.Profile)))
		mux.Handle("/debug/pprof/symbol", s.loggedIn(http.HandlerFunc(pprof.Symbol)))
		mux.Handle("/debug/pprof/trace", s.loggedIn(http.HandlerFunc(pprof.Trace)))
	}
	// No WriteTimeout: a pprof profile or trace takes as long as the
	// client asks; the connection cap bounds what slow readers hold.
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		IdleTimeout: opts.IdleTimeout, ConnState: ln.connState}
	s.ln = ln
	s.console.routes(mux)
	go s.console.history.run(s.console.stop)
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("HTTP endpoint stopped", "err", err)
		}
	}()
	return s, nil
}

// Addr is the address the endpoint listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops accepting requests and waits for those running.
func (s *Server) Shutdown(ctx context.Context) error {
	s.console.close()
	return s.http.Shutdown(ctx)
}

// slogErrorLog passes promhttp's errors to the server's log.
type slogErrorLog struct{ log *slog.Logger }

func (l slogErrorLog) Println(v ...any) {
	if l.log != nil {
		l.log.Warn("metrics: " + fmt.Sprint(v...))
	}
}
