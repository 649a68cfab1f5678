// Command streamdb is the streaming database server: PostgreSQL protocol in
// front, NATS JetStream for input, Pebble for state.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"streamdb/admin"
	"streamdb/config"
	"streamdb/meta"
	"streamdb/node"
	"streamdb/pgwire"
	"streamdb/sql"
)

func main() {
	var cmd string
	if len(os.Args) > 1 {
		cmd = os.Args[1]
	}
	switch cmd {
	case "savepoint":
		exitOn("streamdb savepoint", savepointCommand(os.Args[2:], os.Stdout))
		return
	case "nexmark":
		exitOn("streamdb nexmark", nexmarkCommand(os.Args[2:], os.Stdout))
		return
	case "version", "--version", "-version":
		fmt.Println(versionText())
		return
	case "help":
		var hf haFlags
		_, err := parseConfigInto([]string{"-help"}, &hf) // prints the usage
		exitOn("streamdb", err)
		return
	}
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // --help printed the usage
		}
		fmt.Fprintln(os.Stderr, "streamdb:", fatalText(err))
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// exitOn ends a subcommand: 0 when it succeeded or printed its help on
// request, else 1 after printing err.
func exitOn(name string, err error) {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return
	}
	fmt.Fprintln(os.Stderr, name+":", err)
	os.Exit(1)
}

// usageError is a command line that names no command streamdb has.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// parseConfig applies, from weakest to strongest: defaults, environment
// variables, the YAML file, settings persisted by ALTER SYSTEM SET, flags.
func parseConfig(args []string) (*config.Config, error) {
	cfg, _, err := parseFlags(args)
	return cfg, err
}

// parseFlags is parseConfig that also returns the --ha-* flags.
func parseFlags(args []string) (*config.Config, haFlags, error) {
	var hf haFlags
	cfg, err := parseConfigInto(args, &hf)
	return cfg, hf, err
}

func parseConfigInto(args []string, hf *haFlags) (*config.Config, error) {
	cfg := config.Defaults()
	fs := flag.NewFlagSet("streamdb", flag.ContinueOnError)
	listen := fs.String("listen", cfg.Listen, "PostgreSQL protocol address")
	dataDir := fs.String("data-dir", cfg.DataDir, "data directory (state, checkpoints, embedded NATS store)")
	natsListen := fs.String("nats-listen", cfg.NATSListen, "client address of the embedded NATS server")
	natsURL := fs.String("nats-url", "", "use this NATS server or cluster instead of the embedded one")
	httpListen := fs.String("http-listen", cfg.HTTPListen, "address of the HTTP endpoint: /metrics (Prometheus), /healthz, /readyz; empty turns it off")
	httpPublicHost := fs.String("http-public-host", "", "comma-separated names (name or name:port) the web console answers to besides IP addresses and localhost (setting http.public-host)")
	schemaDir := fs.String("schema-dir", "", "directory of the Protobuf descriptor sets and Avro schemas CREATE STREAM ... WITH (schema_file = '...') reads (default <data dir>/schemas; setting format.schema-dir)")
	pprofOn := fs.Bool("pprof", false, "serve Go's profiles under /debug/pprof/ on the HTTP endpoint")
	logLevel := fs.String("log-level", cfg.LogLevel, "log level: debug, info, warn or error")
	logFormat := fs.String("log-format", cfg.LogFormat, "log format: text or json")
	configFile := fs.String("config", "", "YAML file of settings (flat keys, as in flink-conf.yaml)")
	restoreFrom := fs.String("restore-from", "", "start from this checkpoint or savepoint directory, or from a point in a checkpoint bucket: nats-object://BUCKET (its newest whole checkpoint), nats-object://BUCKET/42 or nats-object://BUCKET/savepoints/NAME")
	tlsCert := fs.String("tls-cert", "", "PEM certificate for TLS (setting ssl_cert_file)")
	tlsKey := fs.String("tls-key", "", "PEM private key for TLS (setting ssl_key_file)")
	tlsRequireRemote := fs.Bool("tls-require-remote", false, "refuse non-TLS connections except from loopback (setting ssl_require_remote)")
	passwordFile := fs.String("password-file", "", "file holding the password of user streamdb (or set STREAMDB_PASSWORD)")
	natsProducerPasswordFile := fs.String("nats-producer-password-file", "", "file holding the password of the embedded NATS server's user producer (or set STREAMDB_NATS_PRODUCER_PASSWORD); without one a password is made and kept in <data dir>/nats-producer.password")
	secretKeyFile := fs.String("secret-key-file", "", "file holding the key CREATE SECRET values are encrypted with at rest (default <data dir>/secret.key, made at first start); servers restoring each other's checkpoints or savepoints (an --ha-group, --restore-from on another machine) need the same one")
	clusterName := fs.String("cluster", "", "join this cluster of servers (needs --nats-url): every server registers and heartbeats in it; the holder of the cluster's lease is its coordinator and runs the views, the others forward sessions to it and take over when its lease expires (docs/design.md, \"A cluster of servers\")")
	replayControl := fs.String("replay-control", "", "a tool: replay the recorded epochs of this cluster's control log (needs --nats-url) into this server's data directory and catalog: its views take each epoch's cuts from the log instead of running their own epochs (docs/cluster.md, \"Replay\")")
	replayUntil := fs.Uint64("replay-until-epoch", 0, "with --replay-control: stop after this recorded epoch and keep serving reads at it (0: follow the log as it grows)")
	nodeName := fs.String("node-name", "", "this server's name in its cluster (default: --ha-advertise or --listen with --cluster, else \"local\")")
	fs.StringVar(&hf.group, "ha-group", "", "join this high-availability group (needs --nats-url): one server of the group is active, the others are standbys that take over when its lease expires")
	fs.StringVar(&hf.advertise, "ha-advertise", "", "host:port clients reach this server at, which standbys name (default: --listen)")
	fs.DurationVar(&hf.ttl, "ha-lease-ttl", 5*time.Second, "how long the group's lease lasts without renewal: a standby takes over this long after the active server stops")
	fs.DurationVar(&hf.renew, "ha-renew-interval", time.Second, "time between renewals of the lease by the active server")
	fs.IntVar(&hf.replicas, "ha-replicas", 1, "replicas of the group's lease, roles and checkpoint buckets on a NATS cluster, and (unless nats.stream-replicas is set) of the JetStream streams the server creates")
	// The flag package's own messages are replaced: --help prints the
	// usage to stdout, and a bad flag is one error line pointing to it.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		printUsage(os.Stdout, fs)
		return nil, err
	} else if err != nil {
		return nil, usageError{err.Error() + "; streamdb --help lists the flags"}
	}
	if fs.NArg() > 0 {
		names := make([]string, len(subcommands))
		for i, c := range subcommands {
			names[i] = c.name
		}
		return nil, usageError{fmt.Sprintf("unknown command %q: the commands are %s; streamdb --help lists them and the server's flags", fs.Arg(0), strings.Join(names, ", "))}
	}
	cfg.Listen, cfg.DataDir, cfg.NATSListen, cfg.NATSURL = *listen, *dataDir, *natsListen, *natsURL
	cfg.HTTPListen, cfg.Pprof, cfg.LogLevel, cfg.LogFormat = *httpListen, *pprofOn, *logLevel, *logFormat
	cfg.ConfigFile, cfg.RestoreFrom = *configFile, *restoreFrom
	cfg.PasswordFile = *passwordFile
	cfg.NATSProducerPasswordFile = *natsProducerPasswordFile
	cfg.SecretKeyFile = *secretKeyFile
	cfg.Cluster, cfg.NodeName = *clusterName, *nodeName
	cfg.ReplayControl, cfg.ReplayUntilEpoch = *replayControl, *replayUntil
	if err := cfg.LoadEnv(os.Getenv); err != nil {
		return nil, err
	}
	if *configFile != "" {
		if err := cfg.LoadFile(*configFile); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(cfg.AutoFile()); err == nil {
		if err := cfg.LoadFile(cfg.AutoFile()); err != nil {
			return nil, err
		}
	}
	// These flags beat every other source of their settings.
	flagSettings := map[string]struct{ key, value string }{
		"tls-cert":           {config.SSLCertFile, *tlsCert},
		"tls-key":            {config.SSLKeyFile, *tlsKey},
		"tls-require-remote": {config.SSLRequireRemote, fmt.Sprint(*tlsRequireRemote)},
		"http-public-host":   {config.HTTPPublicHost, *httpPublicHost},
		"schema-dir":         {config.FormatSchemaDir, *schemaDir},
	}
	var flagErr error
	fs.Visit(func(f *flag.Flag) {
		if s, ok := flagSettings[f.Name]; ok && flagErr == nil {
			flagErr = cfg.Set(s.key, s.value)
		}
	})
	if flagErr != nil {
		return nil, flagErr
	}
	if maxConns, reserved := cfg.Int(config.MaxConnections), cfg.Int(config.SuperuserReservedConnections); maxConns > 0 && reserved >= maxConns {
		// PostgreSQL refuses to start too: no session but a superuser's
		// could ever be served.
		return nil, fmt.Errorf("superuser_reserved_connections (%d) must be less than max_connections (%d): lower superuser_reserved_connections (0 reserves none) or raise max_connections", reserved, maxConns)
	}
	return cfg, nil
}

func run(args []string) error {
	// Signals are caught from the first instruction: a server that steps
	// down re-executes itself (stepDown), and a SIGTERM during the new
	// process's start must stop it cleanly, not kill it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	cfg, hf, err := parseFlags(args)
	if err != nil {
		return err
	}
	if err := clusterFlags(cfg, &hf); err != nil {
		return err
	}
	if err := replayFlags(cfg, hf); err != nil {
		return err
	}
	log, err := newLogger(cfg, os.Stderr)
	if err != nil {
		return err
	}
	// Packages without a logger of their own (Pebble's errors, the disk
	// guards) log through slog's default: give them the same level and
	// format.
	slog.SetDefault(log)
	node.TuneProcess()
	stopProfile, err := startProfiles()
	if err != nil {
		return err
	}
	defer stopProfile()
	sec, err := serverSecurity(cfg, log)
	if err != nil {
		return err
	}
	var hs *haState
	if hf.group != "" {
		hs = newHAState(hf.group)
	}
	httpSrv, engineOpened, err := startHTTP(cfg, hs, sec.Auth, log)
	if err != nil {
		return err
	}
	// Until the server serves, a signal cancels starting: the wait as a
	// standby, the download of the checkpoint a takeover restores. The
	// server then releases any lease it took and exits cleanly.
	startCtx, cancelStart := context.WithCancel(context.Background())
	defer cancelStart()
	var stopped atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case sig := <-sigs:
			log.Info("stopping while starting", "signal", sig.String())
			stopped.Store(true)
			cancelStart()
		case <-startCtx.Done():
		}
	}()
	var member *groupMember
	var lost <-chan struct{}
	damaged := make(chan error, 1)
	opts := node.Options{Ctx: startCtx, Damaged: damaged}
	var roles meta.RoleReplica
	var serving atomic.Bool
	var cm *clusterMember
	if cfg.Cluster != "" {
		if cm, err = clusterJoin(startCtx, cfg, hf, memberStatus(hs, &serving), log); err != nil {
			if startCtx.Err() != nil {
				log.Info("stopped")
				return nil
			}
			return err
		}
		defer cm.leave()
	}
	if hf.group != "" {
		if member, err = haJoin(startCtx, cfg, hf, sec, hs, log); err != nil {
			if errors.Is(err, errStoppedAsStandby) {
				log.Info("stopped")
				return nil
			}
			return err
		}
		opts.Fence, roles, lost = member.lease, member.roles, member.lease.Lost()
	}
	engine, err := openEngine(cfg, log, opts, roles)
	cancelStart()
	<-watched
	if member != nil {
		member.closeStandby()
	}
	if stopped.Load() {
		if err == nil {
			err = engine.Close()
		} else {
			log.Info("start abandoned", "err", err)
			err = nil
		}
		if member != nil {
			member.release(log)
		}
		if err == nil {
			log.Info("stopped")
		}
		return err
	}
	if err != nil {
		if member != nil {
			member.release(log)
		}
		return err
	}
	if hs != nil {
		hs.phase.Store(phaseNone)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		engine.Close()
		return fmt.Errorf("listen on %s: %w (choose another address with --listen)", cfg.Listen, err)
	}
	if cm != nil {
		if err := cm.startServing(cfg, hf, engine, member.lease); err != nil {
			ln.Close()
			engine.Close()
			member.release(log)
			return err
		}
	} else {
		engine.SetCluster(localView{node: nodeName(cfg, hf), addr: cfg.Listen, started: time.Now().UTC(), engine: engine})
	}
	serving.Store(true)
	engineOpened(engine)
	srv := pgwire.NewServer(engine, log)
	sec = withUsers(sec, engine)
	srv.SetSecurity(sec)
	if httpSrv != nil {
		httpSrv.SetConsole(engine, admin.ConsoleAccess{Auth: sec.Auth, TrustedUser: sql.BootstrapUser, PublicHosts: strings.Split(cfg.Values[config.HTTPPublicHost], ",")})
	}
	srv.SetMaxConnections(int(cfg.Int(config.MaxConnections)))
	srv.SetSuperuserReservedConnections(int(cfg.Int(config.SuperuserReservedConnections)))
	srv.SetMaxQueryLength(int(cfg.Int(config.MaxQueryLength)))
	log.Info("streamdb ready", "listen", ln.Addr().String(), "nats", engine.NATSURL(), "data_dir", cfg.DataDir)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-lost:
		// Nothing more commits (every commit checks the lease); the
		// process restarts itself as a standby.
		hs.phase.Store(phaseStepDown)
		if cm != nil {
			cm.leave() // the new process registers at once, not after the TTL
		}
		return stepDown(log)
	case err := <-damaged:
		// A clean shutdown would go on using the damaged state (the
		// memory backend's final snapshot, say): restart at once, as a
		// crash would, and recover from the newest intact checkpoint.
		if member != nil {
			member.release(log)
		}
		if cm != nil {
			cm.leave()
		}
		return restartAfterDamage(log, err)
	case sig := <-sigs:
		log.Info("shutting down", "signal", sig.String())
	case err := <-served:
		if err != nil {
			log.Error("server stopped", "err", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		log.Warn("closing connections", "err", err)
	}
	if httpSrv != nil {
		if err := httpSrv.Shutdown(ctx); err != nil {
			log.Warn("closing the HTTP endpoint", "err", err)
		}
	}
	if cm != nil {
		// Before the engine closes: the heartbeat reads its load.
		cm.leave()
	}
	if err := engine.Close(); err != nil {
		return err
	}
	if member != nil {
		// A standby takes over at once instead of after the lease's TTL.
		member.release(log)
	}
	log.Info("stopped")
	return nil
}

// openEngine opens the server's node (NATS, the state, the runtime and
// checkpoints), then the SQL engine over it.
func openEngine(cfg *config.Config, log *slog.Logger, opts node.Options, roles meta.RoleReplica) (*sql.Engine, error) {
	n, err := node.Open(cfg, log, opts)
	if err != nil {
		return nil, err
	}
	return sql.Open(meta.NewNode(n), log, roles)
}
