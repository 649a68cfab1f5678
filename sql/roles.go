package sql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/pgwire"
	"streamdb/sql/front"
	"streamdb/sqlerr"
)

// Users, roles and grants live in <data dir>/roles.json, outside the
// Pebble state: checkpoints, savepoints and ROLLBACK TO restore Pebble, and
// who may log in and what they may do must not go back with it (a revoked
// privilege or a changed password would come back). The file is rewritten
// whole, fsynced and renamed into place on every change. On a server of an
// --ha-group the same content is also kept in the group's NATS key-value
// bucket (RoleReplica), written before the file: the server that takes
// over starts from it, so a role, password or grant made on the old active
// server exists on the new one.

// RolesFile is the name of the roles file in the data directory.
const RolesFile = "roles.json"

// BootstrapUser is the superuser that always exists; its password comes
// from STREAMDB_PASSWORD or --password-file.
const BootstrapUser = "streamdb"

// publicRole is the pseudo-role PUBLIC: every role has what it is granted.
const publicRole = "public"

// sqlerr.InsufficientPrivilege is SQLSTATE 42501.

// roleDef is one created role.
type roleDef struct {
	Superuser bool `json:"superuser,omitempty"`
	Login     bool `json:"login,omitempty"`
	// SCRAM is the SCRAM-SHA-256 verifier in PostgreSQL's text form; ""
	// when the role has no password.
	SCRAM     string    `json:"scram,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	// OID is a stable id for pg_roles.
	OID int64 `json:"oid"`
}

// roleData is the content of the roles file.
type roleData struct {
	Version int                 `json:"version"`
	NextOID int64               `json:"next_oid"`
	Roles   map[string]*roleDef `json:"roles"`
	// Owners maps an object key (objectKey) to the role that created it.
	Owners map[string]string `json:"owners"`
	// Grants maps an object key to role to the privileges granted.
	Grants map[string]map[string][]string `json:"grants"`
	// DatabaseCreate holds the roles granted CREATE ON DATABASE.
	DatabaseCreate []string `json:"database_create,omitempty"`
}

// A RoleReplica keeps the roles where every server of a group reads them.
type RoleReplica interface {
	// Load returns the roles stored last; nil when none were.
	Load(ctx context.Context) ([]byte, error)
	// Store replaces them; it fails, storing nothing, once this server
	// may no longer commit (it lost its group's lease).
	Store(ctx context.Context, data []byte) error
}

// roleReplicaTimeout bounds one Load or Store of the roles.
const roleReplicaTimeout = 10 * time.Second

// roleStore is the server's roles, kept in memory and in the roles file.
type roleStore struct {
	path    string      // "" keeps them in memory only
	replica RoleReplica // nil outside a group
	mu      sync.RWMutex
	d       roleData
	// passwords is set once the server authenticates clients (a password
	// is set for the bootstrap superuser): then no session is trusted.
	passwords atomic.Bool
}

// firstRoleOID is the first oid given to created roles (PostgreSQL's
// bootstrap superuser is 10).
const firstRoleOID = 16384 + 1<<20

// openRoles reads the roles: from replica when it holds them (the group's
// roles beat whatever this data directory kept from an earlier term), else
// from the roles file, which then seeds the replica.
func openRoles(dataDir string, replica RoleReplica) (*roleStore, error) {
	rs := &roleStore{replica: replica}
	if replica != nil {
		// Retried: a lost reply (a NATS node going as this server takes
		// over) must not fail the start.
		ctx, cancel := context.WithTimeout(context.Background(), roleReplicaTimeout)
		var data []byte
		err := broker.Retry(ctx, broker.RequestAttempt, func(ctx context.Context) (err error) {
			data, err = replica.Load(ctx)
			return err
		})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("read the group's roles: %w", err)
		}
		if data != nil {
			rs.d = roleData{Version: 1, NextOID: firstRoleOID}
			if err := json.Unmarshal(data, &rs.d); err != nil {
				return nil, fmt.Errorf("the group's roles are damaged: %w", err)
			}
			if dataDir != "" {
				rs.path = filepath.Join(dataDir, RolesFile)
			}
			rs.fill()
			// Only the local file needs the group's roles: the bucket
			// has them.
			rs.mu.Lock()
			defer rs.mu.Unlock()
			rs.replica = nil
			err := rs.saveLocked()
			rs.replica = replica
			return rs, err
		}
	}
	if dataDir != "" {
		rs.path = filepath.Join(dataDir, RolesFile)
	}
	rs.d = roleData{Version: 1, NextOID: firstRoleOID}
	if rs.path != "" {
		data, err := os.ReadFile(rs.path)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", rs.path, err)
		default:
			if err := json.Unmarshal(data, &rs.d); err != nil {
				return nil, fmt.Errorf("read %s: %w", rs.path, err)
			}
		}
	}
	rs.fill()
	if replica != nil {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		return rs, rs.saveLocked()
	}
	return rs, nil
}

// fill makes the maps of a freshly read roleData.
func (rs *roleStore) fill() {
	if rs.d.Roles == nil {
		rs.d.Roles = map[string]*roleDef{}
	}
	if rs.d.Owners == nil {
		rs.d.Owners = map[string]string{}
	}
	if rs.d.Grants == nil {
		rs.d.Grants = map[string]map[string][]string{}
	}
}

// saveLocked stores the roles in the replica, if any, then writes the
// roles file atomically: a temporary file, fsynced, renamed over the old
// one, and the directory fsynced. The replica goes first: a change the
// group did not store fails (and is undone) rather than live on this
// server only.
func (rs *roleStore) saveLocked() error {
	data, err := json.MarshalIndent(&rs.d, "", "  ")
	if err != nil {
		return err
	}
	if rs.replica != nil {
		ctx, cancel := context.WithTimeout(context.Background(), roleReplicaTimeout)
		err := rs.replica.Store(ctx, data)
		cancel()
		if err != nil {
			return err
		}
	}
	if rs.path == "" {
		return nil
	}
	tmp := rs.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, rs.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", rs.path, err)
	}
	if d, err := os.Open(filepath.Dir(rs.path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// update changes the roles under the lock and saves them; if the change or
// saving fails, the change is undone.
func (rs *roleStore) update(change func(d *roleData) error) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	before, err := json.Marshal(&rs.d)
	if err != nil {
		return err
	}
	err = change(&rs.d)
	if err == nil {
		err = rs.saveLocked()
	}
	if err != nil {
		var old roleData
		if json.Unmarshal(before, &old) == nil {
			rs.d = old
		}
	}
	return err
}

// role returns a created role (nil for the bootstrap user and unknown
// names).
func (rs *roleStore) role(name string) *roleDef {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if r := rs.d.Roles[name]; r != nil {
		c := *r
		return &c
	}
	return nil
}

// trusts reports whether a session of user logged in without
// authenticating under a name that is no role: only without passwords.
func (rs *roleStore) trusts(user string) bool {
	return !rs.passwords.Load() && !rs.exists(user)
}

// exists reports whether name is the bootstrap user or a created role.
func (rs *roleStore) exists(name string) bool {
	return name == BootstrapUser || rs.role(name) != nil
}

// objectKey names an object in the roles file: its name and creation time,
// so that a dropped object's grants do not pass to a new object of the
// same name, while an object that ROLLBACK TO brings back (the same
// descriptor) finds its owner and grants again.
func objectKey(d *catalog.Descriptor) string {
	return d.Name + "@" + d.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// owner returns the role that owns d: its creator, or the bootstrap
// superuser for objects created before roles existed or whose creator was
// dropped.
func (rs *roleStore) owner(d *catalog.Descriptor) string {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if o, ok := rs.d.Owners[objectKey(d)]; ok {
		if _, exists := rs.d.Roles[o]; exists || o == BootstrapUser {
			return o
		}
	}
	return BootstrapUser
}

// setOwner records d's owner unless it has one.
func (rs *roleStore) setOwner(d *catalog.Descriptor, role string) error {
	key := objectKey(d)
	rs.mu.RLock()
	_, has := rs.d.Owners[key]
	rs.mu.RUnlock()
	if has {
		return nil
	}
	return rs.update(func(rd *roleData) error {
		if _, has := rd.Owners[key]; !has {
			rd.Owners[key] = role
		}
		return nil
	})
}

// granted reports whether role (or PUBLIC) holds priv on d.
func (rs *roleStore) granted(d *catalog.Descriptor, role, priv string) bool {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	g := rs.d.Grants[objectKey(d)]
	for _, r := range []string{role, publicRole} {
		for _, p := range g[r] {
			if p == priv {
				return true
			}
		}
	}
	return false
}

// mayCreate reports whether role (or PUBLIC) was granted CREATE on the
// database.
func (rs *roleStore) mayCreate(role string) bool {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	for _, r := range rs.d.DatabaseCreate {
		if r == role || r == publicRole {
			return true
		}
	}
	return false
}

// allPrivileges are the table privileges, in PostgreSQL's ACL order.
var allPrivileges = []string{"INSERT", "SELECT", "UPDATE", "DELETE"}

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
	e.roles.passwords.Store(true)
	return &roleAuthenticator{e: e, bootstrap: bootstrap}
}

// SCRAMVerifier implements pgwire.Authenticator.
func (a *roleAuthenticator) SCRAMVerifier(ctx context.Context, user string) (*pgwire.SCRAMVerifier, error) {
	if user == BootstrapUser {
		return a.bootstrap.SCRAMVerifier(ctx, user)
	}
	r := a.e.roles.role(user)
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
	if r := e.roles.role(user); r != nil && !r.Login {
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
	if r := s.e.roles.role(s.user); r != nil {
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
func (s *session) execRoleStmt(n *front.RoleStmt) (string, error) {
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
		r := &roleDef{Login: n.User, CreatedAt: time.Now().UTC()}
		if err := applyRoleOptions(r, n); err != nil {
			return "", err
		}
		return tag, s.e.roles.update(func(d *roleData) error {
			if _, ok := d.Roles[name]; ok || name == BootstrapUser {
				return sqlerr.New(sqlerr.DuplicateObject, "role %q already exists", name)
			}
			r.OID = d.NextOID
			d.NextOID++
			d.Roles[name] = r
			return nil
		})
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
		var upd roleDef
		if err := applyRoleOptions(&upd, n); err != nil {
			return "", err
		}
		return tag, s.e.roles.update(func(d *roleData) error {
			r, ok := d.Roles[name]
			if !ok {
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
			}
			if n.Superuser != nil {
				r.Superuser = *n.Superuser
			}
			if n.Login != nil {
				r.Login = *n.Login
			}
			if n.Password != nil || n.PasswordNull {
				r.SCRAM = upd.SCRAM
			}
			return nil
		})
	}
	// DROP
	if !super {
		return "", withDetail(sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to drop role"), "Only roles with the SUPERUSER attribute may drop roles.")
	}
	live := map[string]*catalog.Descriptor{}
	for _, d := range s.e.allObjects() {
		live[objectKey(d)] = d
	}
	return tag, s.e.roles.update(func(d *roleData) error {
		for _, name := range n.Names {
			switch {
			case name == BootstrapUser:
				return sqlerr.New(sqlerr.ObjectInUse, "cannot drop role %s because it is required by the database system", name)
			case name == s.user:
				return sqlerr.New(sqlerr.ObjectInUse, "current user cannot be dropped")
			}
			if _, ok := d.Roles[name]; !ok {
				if n.IfExists {
					continue
				}
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
			}
			var owned []string
			for key, o := range d.Owners {
				if o == name && live[key] != nil {
					owned = append(owned, fmt.Sprintf("owner of %s %s", relKindWord(live[key]), live[key].Name))
				}
			}
			if len(owned) > 0 {
				sort.Strings(owned)
				return withDetail(sqlerr.New(sqlerr.DependentObjectsExist, "role %q cannot be dropped because some objects depend on it", name), "%s", strings.Join(owned, "\n")).
					WithHint("Drop those objects first.")
			}
			delete(d.Roles, name)
			for key, g := range d.Grants {
				delete(g, name)
				if len(g) == 0 {
					delete(d.Grants, key)
				}
			}
			d.DatabaseCreate = without(d.DatabaseCreate, name)
		}
		return nil
	})
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

func applyRoleOptions(r *roleDef, n *front.RoleStmt) error {
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

func without(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
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
	case catalog.KindView:
		return "materialized view"
	case catalog.KindPlainView:
		return "view"
	case catalog.KindStream:
		return "stream"
	case catalog.KindSequence:
		return "sequence"
	case catalog.KindSource:
		return "source"
	}
	return "table"
}

// execGrant runs GRANT or REVOKE.
func (s *session) execGrant(n *front.Grant) (string, error) {
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
		if r != publicRole && !s.e.roles.exists(r) {
			return "", sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", r)
		}
		roles[i] = r
	}
	if n.Database != "" {
		if !super {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for database %s", n.Database)
		}
		return tag, s.e.roles.update(func(d *roleData) error {
			for _, r := range roles {
				d.DatabaseCreate = without(d.DatabaseCreate, r)
				if !n.Revoke {
					d.DatabaseCreate = append(d.DatabaseCreate, r)
				}
			}
			return nil
		})
	}
	var objs []*catalog.Descriptor
	if n.AllInSchema != "" {
		if n.AllInSchema != "public" {
			return "", sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", n.AllInSchema)
		}
		objs = s.e.allObjects()
	}
	for _, name := range n.Objects {
		d, ok := s.e.lookup(name)
		if !ok {
			return "", sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
		objs = append(objs, d)
	}
	for _, d := range objs {
		if !super && s.e.roles.owner(d) != s.user {
			return "", sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
		}
	}
	privs := n.Privileges
	if privs == nil {
		privs = allPrivileges
	}
	return tag, s.e.roles.update(func(d *roleData) error {
		for _, o := range objs {
			key := objectKey(o)
			g := d.Grants[key]
			if g == nil {
				g = map[string][]string{}
				d.Grants[key] = g
			}
			for _, r := range roles {
				have := g[r]
				for _, p := range privs {
					have = without(have, p)
					if !n.Revoke {
						have = append(have, p)
					}
				}
				sort.Strings(have)
				if len(have) == 0 {
					delete(g, r)
				} else {
					g[r] = have
				}
			}
			if len(g) == 0 {
				delete(d.Grants, key)
			}
		}
		return nil
	})
}

// withDetail sets e's DETAIL.
func withDetail(e *sqlerr.Error, format string, args ...any) *sqlerr.Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// Superuser implements pgwire.SuperuserSession: whether the session may
// take a connection slot reserved for superusers.
func (s *session) Superuser() bool { return s.roleSuperuser() }

// copyPrivileges gives renamed object to the owner and grants of from (the
// same object under its old name). from's entries stay: they are stale
// once the rename commits (nothing live has its key, as after a DROP), and
// they are the object's again if ROLLBACK TO SAVEPOINT brings the old name
// back.
func (rs *roleStore) copyPrivileges(from, to *catalog.Descriptor) error {
	fk, tk := objectKey(from), objectKey(to)
	return rs.update(func(d *roleData) error {
		if o, ok := d.Owners[fk]; ok {
			d.Owners[tk] = o
		}
		if g, ok := d.Grants[fk]; ok {
			c := map[string][]string{}
			for r, ps := range g {
				c[r] = append([]string(nil), ps...)
			}
			d.Grants[tk] = c
		}
		return nil
	})
}
