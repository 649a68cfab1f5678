package sql

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/pgcdc"
	"streamdb/sqlerr"
)

// Secrets (CREATE SECRET name AS 'value') keep values such as a source
// database's password out of the statements that use them: CREATE SOURCE
// names the secret, and its connection string is put together only when
// the source connects. A secret is a catalog object (KindSecret), so it
// survives restarts and goes back with ROLLBACK TO as other objects do
// (its value encrypted, secret_key.go);
// its name is taken among relations' names, as in Materialize. Its value
// is never shown back: no system table, SHOW or message carries it, and
// pg_stat_activity shows the statements that set it redacted (pgwire).
// Only its owner, or a superuser, alters or drops it; only a superuser
// creates a source, so only a superuser uses one.

func (e *Engine) createSecret(ctx context.Context, n *front.CreateSecret) (string, error) {
	const tag = "CREATE SECRET"
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if d, ok := e.lookup(n.Name); ok || e.relationExists(n.Name) {
		if ok && d.Kind == catalog.KindSecret {
			if n.IfNotExists {
				return tag, nil
			}
			return "", sqlerr.New(sqlerr.DuplicateObject, "secret %q already exists", n.Name).
				WithHint("Change its value with ALTER SECRET %s AS '...'.", n.Name)
		}
		return "", sqlerr.New(sqlerr.DuplicateObject, "relation %q already exists", n.Name).
			WithHint("A secret's name is taken among tables, views and sources; choose another.")
	}
	sealed, err := e.secrets.seal(n.Value)
	if err != nil {
		return "", err
	}
	d := &catalog.Descriptor{Name: n.Name, Kind: catalog.KindSecret, CreatedAt: time.Now().UTC(), Secret: sealed}
	if err := e.persist(d); err != nil {
		return "", err
	}
	return tag, e.ddlCheckpoint(ctx)
}

func (e *Engine) alterSecret(ctx context.Context, n *front.AlterSecret) (string, error) {
	const tag = "ALTER SECRET"
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	d, err := e.secret(n.Name)
	if err != nil {
		if n.IfExists && d == nil {
			return tag, nil
		}
		return "", err
	}
	next := *d
	if next.Secret, err = e.secrets.seal(n.Value); err != nil {
		return "", err
	}
	if err := e.replaceDescriptor(d, &next); err != nil {
		return "", err
	}
	return tag, e.ddlCheckpoint(ctx)
}

// dropSecret drops secrets; one a source uses goes only with CASCADE,
// which drops the source too.
func (e *Engine) dropSecret(ctx context.Context, n *front.DropSecret) (string, error) {
	const tag = "DROP SECRET"
	var drop []*catalog.Descriptor
	var sources []*catalog.Descriptor
	for _, name := range n.Names {
		d, err := e.secret(name)
		if err != nil {
			if n.IfExists && d == nil {
				continue
			}
			return "", err
		}
		users := e.secretUsers(name)
		if len(users) > 0 && !n.Cascade {
			return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop secret %s because source %s uses it", name, users[0].Name).
				WithHint("Use DROP SECRET ... CASCADE to drop the source too, or DROP SOURCE %s first.", users[0].Name)
		}
		drop = append(drop, d)
		sources = append(sources, users...)
	}
	for _, src := range sources {
		if d, ok := e.lookup(src.Name); ok && d == src {
			if err := e.dropPGSource(ctx, src, true); err != nil {
				return "", err
			}
		}
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	for _, d := range drop {
		if cur, ok := e.lookup(d.Name); !ok || cur.Kind != catalog.KindSecret {
			continue
		}
		if err := e.dropObject(d); err != nil {
			return "", err
		}
	}
	if len(drop) == 0 {
		return tag, nil
	}
	return tag, e.ddlCheckpoint(ctx)
}

// secret returns the secret name; with an error, d is nil when there is
// no object of that name.
func (e *Engine) secret(name string) (d *catalog.Descriptor, err error) {
	d, ok := e.lookup(name)
	if !ok {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "secret %q does not exist", name).
			WithHint("Create it with CREATE SECRET %s AS '...'.", name)
	}
	if d.Kind != catalog.KindSecret || d.Secret == nil {
		return d, sqlerr.New(sqlerr.WrongObjectType, "%q is a %s, not a secret", name, relKindWord(d))
	}
	return d, nil
}

// secretUsers returns the sources that use secret name.
func (e *Engine) secretUsers(name string) []*catalog.Descriptor {
	var out []*catalog.Descriptor
	for _, d := range e.objects(catalog.KindSource) {
		if slices.Contains(d.Source.Secrets(), name) {
			out = append(out, d)
		}
	}
	return out
}

// ownSecret refuses to alter or drop (verb) secret name to a role that
// does not own it (superusers are let through before).
func (s *session) ownSecret(name, verb string) error {
	if d, ok := s.e.lookup(name); ok && d.Kind == catalog.KindSecret && s.e.roles.Owner(d) != s.user {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of secret %s to %s it", name, verb).
			WithHint("Its owner or a superuser can %s it.", verb)
	}
	return nil
}

// sourceDSN puts together the connection string of source src from its
// secrets as they are now.
func (e *Engine) sourceDSN(src *catalog.PGSource) (string, error) {
	dsn := src.Connection
	if src.ConnectionSecret != "" {
		v, err := e.secretValue(src.ConnectionSecret)
		if err != nil {
			return "", err
		}
		dsn = v
	}
	if _, err := pgcdc.ParseConfig(dsn); err != nil {
		if refused, ok := errors.AsType[*pgcdc.KeyRefusedError](err); ok {
			if refused.File {
				return "", sqlerr.New(sqlerr.InsufficientPrivilege, "connection string key %q names a file on the streamdb server, which a client may not do", refused.Key).
					WithHint("Leave it out: give a CA or client certificate as a secret (SSL CERTIFICATE AUTHORITY SECRET, SSL CERTIFICATE SECRET, SSL KEY SECRET) with sslmode=verify-full; the keys streamdb takes are %s.", pgcdc.AllowedKeys())
			}
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "connection string key %q is not supported", refused.Key).
				WithHint("The keys streamdb takes are %s.", pgcdc.AllowedKeys())
		}
		if src.ConnectionSecret != "" {
			// The parser's message may quote the string: say only where.
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "secret %s does not hold a valid connection string", src.ConnectionSecret).
				WithHint("Set it to a libpq connection string, such as ALTER SECRET %s AS 'host=db.example.com dbname=shop user=repl password=...'.", src.ConnectionSecret)
		}
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "%v", err).WithHint("Give CONNECTION a libpq connection string, such as 'host=db.example.com dbname=shop user=repl'.")
	}
	if src.PasswordSecret != "" {
		v, err := e.secretValue(src.PasswordSecret)
		if err != nil {
			return "", err
		}
		dsn = pgcdc.WithPassword(dsn, v)
	}
	return dsn, nil
}

// sourceConnectionText is how SHOW SOURCES shows a source's connection:
// the connection string redacted, and the secrets only by name.
func sourceConnectionText(src *catalog.PGSource) string {
	text := "SECRET " + src.ConnectionSecret
	if src.ConnectionSecret == "" {
		text = strings.TrimSpace(pgcdc.Redact(src.Connection))
	}
	var named []string
	for _, s := range []struct{ option, secret string }{
		{"PASSWORD", src.PasswordSecret}, {"SSL CERTIFICATE AUTHORITY", src.SSLCASecret},
		{"SSL CERTIFICATE", src.SSLCertSecret}, {"SSL KEY", src.SSLKeySecret},
	} {
		if s.secret != "" {
			named = append(named, s.option+" SECRET "+s.secret)
		}
	}
	if len(named) > 0 {
		text += " (" + strings.Join(named, ", ") + ")"
	}
	return text
}
