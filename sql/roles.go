package sql

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/sqlerr"
)

// The roles, owners and grants are kept by meta.Roles; this file holds
// the statements that change them and the pgwire authenticator.

// BootstrapUser is the superuser that always exists; its password comes
// from STREAMDB_PASSWORD or --password-file.
const BootstrapUser = meta.BootstrapUser

// publicRole is the pseudo-role PUBLIC: every role has what it is granted.
const publicRole = meta.PublicRole

// sqlerr.InsufficientPrivilege is SQLSTATE 42501.

// allPrivileges are the table privileges, in PostgreSQL's ACL order:
// GRANT ALL gives every one (arwdDxt), as in PostgreSQL. REFERENCES and
// TRIGGER are kept and answered by has_table_privilege and relacl, but
// no statement checks them: streamdb has no triggers, and a foreign key
// does not check REFERENCES on the table it references.
var allPrivileges = []string{"INSERT", "SELECT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"}

// allSequencePrivileges are a sequence's privileges, in PostgreSQL's ACL
// order.
var allSequencePrivileges = []string{"SELECT", "UPDATE", "USAGE"}

// roleAuthenticator looks users up for pgwire: the bootstrap superuser
// through the configured verifier, created roles in the roles file.
type roleAuthenticator struct {
	e         *Engine
	bootstrap pgwire.Authenticator
}

// Authenticator returns the pgwire.Authenticator of this server's users:
// bootstrap answers for the bootstrap superuser (STREAMDB_PASSWORD or
// --password-file), and created roles that may log in and have a password
// answer from the roles file.
func (e *Engine) Authenticator(bootstrap pgwire.Authenticator) pgwire.Authenticator {
	e.roles.RequirePasswords()
	return &roleAuthenticator{e: e, bootstrap: bootstrap}
}

// SCRAMVerifier implements pgwire.Authenticator.
func (a *roleAuthenticator) SCRAMVerifier(ctx context.Context, user string) (*pgwire.SCRAMVerifier, error) {
	if user == BootstrapUser {
		return a.bootstrap.SCRAMVerifier(ctx, user)
	}
	r := a.e.roles.Role(user)
	if r == nil || !r.Login || r.SCRAM == "" {
		return nil, nil
	}
	v, err := pgwire.ParseSCRAMVerifier(r.SCRAM)
	if err != nil {
		a.e.log.Error("stored SCRAM verifier is unreadable", "user", user, "err", err)
		return nil, nil
	}
	return v, nil
}

// checkLogin refuses a session for a created role without LOGIN, as
// PostgreSQL does even for trusted connections.
func (e *Engine) checkLogin(user string) error {
	if r := e.roles.Role(user); r != nil && !r.Login {
		return sqlerr.New(sqlerr.InvalidAuthorizationSpecification, "role %q is not permitted to log in", user)
	}
	return nil
}

// roleSuperuser reports whether the session's user is a superuser: the
// bootstrap user, a role created SUPERUSER, or a trusted connection (no
// password is set, loopback) under a name that was no created role when
// it connected.
func (s *session) roleSuperuser() bool {
	if s.user == BootstrapUser {
		return true
	}
	if r := s.e.roles.Role(s.user); r != nil {
		return r.Superuser
	}
	return s.trustedAnyUser
}

// scramOf turns a PASSWORD option into a stored verifier: a SCRAM verifier
// text (psql's \password) is kept as given, a password is salted and
// hashed. An empty password means none, as in PostgreSQL.
func scramOf(password string) (string, error) {
	if strings.HasPrefix(password, "SCRAM-SHA-256$") {
		v, err := pgwire.ParseSCRAMVerifier(password)
		if err != nil {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid SCRAM-SHA-256 verifier: %v", err)
		}
		return v.String(), nil
	}
	if strings.HasPrefix(password, "md5") && len(password) == 35 {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "MD5 password hashes are not supported").
			WithHint("Give the password itself or a SCRAM-SHA-256 verifier (set password_encryption = 'scram-sha-256' in the client).")
	}
	if password == "" {
		return "", nil
	}
	v, err := pgwire.NewSCRAMVerifier(password)
	if err != nil {
		return "", sqlerr.New(sqlerr.InvalidParameterValue, "invalid password: %v", err)
	}
	return v.String(), nil
}

func roleWord(user bool) string {
	if user {
		return "USER"
	}
	return "ROLE"
}

// execRoleStmt runs CREATE / ALTER / DROP USER or ROLE.
func (s *session) execRoleStmt(_ context.Context, n *front.RoleStmt) (string, error) {
	tag := string(n.Action) + " " + "ROLE"
	super := s.roleSuperuser()
	switch n.Action {
	case front.RoleCreate:
		name := n.Names[0]
		if !super {
			return "", withDetail(sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to create role"), "Only roles with the SUPERUSER attribute may create roles.")
		}
		if err := checkRoleName(name); err != nil {
			return "", err
		}
		r := meta.Role{Login: n.User, CreatedAt: time.Now().UTC()}
		if err := applyRoleOptions(&r, n); err != nil {
			return "", err
		}
		return tag, s.e.roles.CreateRole(name, r)
	case front.RoleAlter:
		name := n.Names[0]
		if name == "current_user" || name == "session_user" {
			name = s.user
		}
		if name == BootstrapUser {
			if n.Password != nil || n.PasswordNull {
				return "", sqlerr.New(sqlerr.CantChangeRuntimeParam, "the password of the bootstrap superuser %q is set when the server starts", BootstrapUser).
					WithHint("Set STREAMDB_PASSWORD or --password-file and restart the server.")
			}
			if n.Superuser != nil && !*n.Superuser || n.Login != nil && !*n.Login {
				return "", withDetail(sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to alter role"), "The bootstrap user must have the SUPERUSER and LOGIN attributes.")
			}
			if !super {
				return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to alter role")
			}
			return tag, nil
		}
		// A role may change its own password; everything else is for
		// superusers.
		self := name == s.user && n.Superuser == nil && n.Login == nil
		if !super && !self {
			return "", withDetail(sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to alter role"), "Only roles with the SUPERUSER attribute may alter other roles or change role attributes.")
		}
		var upd meta.Role
		if err := applyRoleOptions(&upd, n); err != nil {
			return "", err
		}
		c := meta.RoleChange{Superuser: n.Superuser, Login: n.Login}
		if n.Password != nil || n.PasswordNull {
			c.SCRAM = &upd.SCRAM
		}
		return tag, s.e.roles.AlterRole(name, c)
	}
	// DROP
	if !super {
		return "", withDetail(sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to drop role"), "Only roles with the SUPERUSER attribute may drop roles.")
	}
	live := map[string]string{}
	for _, d := range s.e.allObjects() {
		live[meta.ObjectKey(d)] = relKindWord(d) + " " + d.Name
	}
	refuse := func(name string) error {
		switch {
		case name == BootstrapUser:
			return sqlerr.New(sqlerr.ObjectInUse, "cannot drop role %s because it is required by the database system", name)
		case name == s.user:
			return sqlerr.New(sqlerr.ObjectInUse, "current user cannot be dropped")
		}
		return nil
	}
	sinks, err := s.e.sinks()
	if err != nil {
		return "", err
	}
	ownedSinks := func(role string) []string {
		var out []string
		for _, k := range sinks {
			if k.Owner == role {
				out = append(out, "sink "+k.Name)
			}
		}
		return out
	}
	return tag, s.e.roles.DropRoles(n.Names, n.IfExists, refuse, live, ownedSinks, s.databaseName())
}

func checkRoleName(name string) error {
	switch {
	case name == "" || len(name) > 63:
		return sqlerr.New(sqlerr.InvalidName, "invalid role name %q", name)
	case name == publicRole || name == "none" || name == "current_user" || name == "session_user" || name == "current_role":
		return sqlerr.New(sqlerr.InvalidName, "role name %q is reserved", name)
	case strings.HasPrefix(name, "pg_"):
		return withDetail(sqlerr.New(sqlerr.InvalidName, "role name %q is reserved", name), "Role names starting with \"pg_\" are reserved.")
	}
	return nil
}

func applyRoleOptions(r *meta.Role, n *front.RoleStmt) error {
	if n.Superuser != nil {
		r.Superuser = *n.Superuser
	}
	if n.Login != nil {
		r.Login = *n.Login
	}
	if n.Password != nil {
		v, err := scramOf(*n.Password)
		if err != nil {
			return err
		}
		r.SCRAM = v
	}
	return nil
}

// allObjects returns every object of the live catalog.
func (e *Engine) allObjects() []*catalog.Descriptor {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	out := make([]*catalog.Descriptor, 0, len(e.objs))
	for _, d := range e.objs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// relKindWord is how PostgreSQL names a relation's kind in messages.
func relKindWord(d *catalog.Descriptor) string {
	switch d.Kind {
	case catalog.KindView, catalog.KindUnpopulatedView:
		return "materialized view"
	case catalog.KindPlainView:
		return "view"
	case catalog.KindStream:
		return "stream"
	case catalog.KindSequence:
		return "sequence"
	case catalog.KindSource:
		return "source"
	case catalog.KindSecret:
		return "secret"
	}
	return "table"
}

// execGrant runs GRANT or REVOKE.
func (s *session) execGrant(_ context.Context, n *front.Grant) (string, error) {
	tag := "GRANT"
	if n.Revoke {
		tag = "REVOKE"
	}
	super := s.roleSuperuser()
	roles := make([]string, len(n.Roles))
	for i, r := range n.Roles {
		if r == "current_user" || r == "session_user" {
			r = s.user
		}
		if r != publicRole && !s.e.roles.Exists(r) {
			return "", sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", r)
		}
		roles[i] = r
	}
	if n.Database != "" {
		if !super {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for database %s", n.Database)
		}
		return tag, s.e.roles.GrantDatabaseCreate(roles, n.Revoke)
	}
	var objs []*catalog.Descriptor
	if n.AllInSchema != "" {
		if n.AllInSchema != "public" {
			return "", sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", n.AllInSchema)
		}
		// ALL TABLES are the relations but the sequences; ALL
		// SEQUENCES the sequences, as in PostgreSQL.
		for _, d := range s.e.allObjects() {
			if (d.Kind == catalog.KindSequence) == n.Sequences {
				objs = append(objs, d)
			}
		}
	}
	for _, name := range n.Objects {
		d, ok := s.e.lookup(name)
		if !ok {
			return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
		if n.Sequences && d.Kind != catalog.KindSequence {
			return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a sequence", name)
		}
		objs = append(objs, d)
	}
	for _, d := range objs {
		if !super && s.e.roles.Owner(d) != s.user {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
		}
	}
	if n.Privileges != nil {
		return tag, s.e.roles.Grant(objs, roles, n.Privileges, n.Revoke)
	}
	// ALL is each object's own privileges.
	var tables, sequences []*catalog.Descriptor
	for _, d := range objs {
		if d.Kind == catalog.KindSequence {
			sequences = append(sequences, d)
		} else {
			tables = append(tables, d)
		}
	}
	if err := s.e.roles.Grant(tables, roles, allPrivileges, n.Revoke); err != nil {
		return "", err
	}
	return tag, s.e.roles.Grant(sequences, roles, allSequencePrivileges, n.Revoke)
}

// withDetail sets e's DETAIL.
func withDetail(e *sqlerr.Error, format string, args ...any) *sqlerr.Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// Superuser implements pgwire.SuperuserSession: whether the session may
// take a connection slot reserved for superusers.
func (s *session) Superuser() bool { return s.roleSuperuser() }
