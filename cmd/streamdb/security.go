package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"streamdb/config"
	"streamdb/pgwire"
	"streamdb/sql"
)

// bootstrapUser is the superuser whose password STREAMDB_PASSWORD or
// --password-file sets.
const bootstrapUser = sql.BootstrapUser

// passwordEnv names the environment variable holding the bootstrap
// superuser's password. It is removed from the environment once read.
const passwordEnv = "STREAMDB_PASSWORD"

// serverSecurity builds the wire server's TLS and authentication from the
// settings: TLS from ssl_cert_file and ssl_key_file, and SCRAM for user
// streamdb when a password is set. Only the password's SCRAM verifier is
// kept.
func serverSecurity(cfg *config.Config, log *slog.Logger) (pgwire.Security, error) {
	var sec pgwire.Security
	certFile, keyFile := cfg.Values[config.SSLCertFile], cfg.Values[config.SSLKeyFile]
	switch {
	case certFile != "" && keyFile != "":
		tlsCfg, warning, err := pgwire.LoadTLSConfig(certFile, keyFile)
		if err != nil {
			return sec, err
		}
		if warning != "" {
			log.Warn(warning)
		}
		sec.TLS = tlsCfg
	case certFile != "" || keyFile != "":
		return sec, errors.New("TLS needs both a certificate and a key: set --tls-cert and --tls-key (ssl_cert_file and ssl_key_file)")
	}
	sec.RequireTLSRemote = cfg.Bool(config.SSLRequireRemote)
	if sec.RequireTLSRemote && sec.TLS == nil {
		return sec, errors.New("ssl_require_remote (--tls-require-remote) needs TLS: set --tls-cert and --tls-key")
	}

	password, err := readPassword(cfg.PasswordFile)
	if err != nil {
		return sec, err
	}
	if password == nil {
		log.Warn("no password is set (" + passwordEnv + " or --password-file): loopback connections are trusted without authentication and all others are refused")
	} else {
		v, err := pgwire.NewSCRAMVerifier(string(password))
		clear(password)
		if err != nil {
			return sec, err
		}
		sec.Auth = pgwire.StaticUsers{bootstrapUser: v}
	}
	log.Info("client authentication", "tls", sec.TLS != nil, "password", sec.Auth != nil, "require_tls_remote", sec.RequireTLSRemote)
	return sec, nil
}

// withUsers makes the engine's users log in too once a password is set:
// the bootstrap superuser keeps the verifier serverSecurity made, and
// users created with CREATE USER answer from the engine. Without a
// password nothing authenticates: loopback connections are trusted.
func withUsers(sec pgwire.Security, engine *sql.Engine) pgwire.Security {
	if sec.Auth != nil {
		sec.Auth = engine.Authenticator(sec.Auth)
	}
	return sec
}

// readPassword returns the password from --password-file (its first line)
// or STREAMDB_PASSWORD, or nil when neither is set. Setting both is an
// error.
func readPassword(file string) ([]byte, error) {
	env := os.Getenv(passwordEnv)
	os.Unsetenv(passwordEnv)
	if file == "" {
		if env == "" {
			return nil, nil
		}
		return []byte(env), nil
	}
	if env != "" {
		return nil, fmt.Errorf("both %s and --password-file are set; use one", passwordEnv)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read password file: %w", err)
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	password := bytes.Clone(line)
	clear(data)
	if len(password) == 0 {
		return nil, fmt.Errorf("password file %s is empty", file)
	}
	return password, nil
}
