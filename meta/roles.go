package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
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

// PublicRole is the pseudo-role PUBLIC: every role has what it is granted.
const PublicRole = "public"

// A Role is one created role.
type Role struct {
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
	Version int              `json:"version"`
	NextOID int64            `json:"next_oid"`
	Roles   map[string]*Role `json:"roles"`
	// Owners maps an object key (ObjectKey) to the role that created it.
	Owners map[string]string `json:"owners"`
	// Grants maps an object key to role to the privileges granted.
	Grants map[string]map[string][]string `json:"grants"`
	// GrantOrder maps an object key to its grantees in the order each
	// was first granted something since it last held nothing, the order
	// PostgreSQL's ACL lists them in. A key is present once a GRANT or
	// REVOKE ran on the object: its ACL is then no longer NULL, even
	// with every grant revoked.
	GrantOrder map[string][]string `json:"grant_order,omitempty"`
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

// Roles is the server's roles, owners and grants, kept in memory and in
// the roles file (and the group's replica). Every method is safe for
// concurrent use; mu is a leaf lock.
type Roles struct {
	path    string      // "" keeps them in memory only
	replica RoleReplica // nil outside a group
	mu      sync.RWMutex
	d       roleData
	// passwords is set once the server authenticates clients (a password
	// is set for the bootstrap superuser): then no session is trusted.
	passwords atomic.Bool
}

// FirstRoleOID is the first oid given to created roles (PostgreSQL's
// bootstrap superuser is 10).
const FirstRoleOID = 16384 + 1<<20

// OpenRoles reads the roles kept in dataDir ("" keeps them in memory
// only): from replica when it holds them (the group's roles beat whatever
// this data directory kept from an earlier term), else from the roles
// file, which then seeds the replica. fence, when not nil, is asked
// before every store in the replica: a server that lost its group's
// lease changes no role (FencedError).
func OpenRoles(dataDir string, replica RoleReplica, fence func() error) (*Roles, error) {
	if replica != nil && fence != nil {
		replica = fencedReplica{check: fence, r: replica}
	}
	rs := &Roles{replica: replica}
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
			rs.d = roleData{Version: 1, NextOID: FirstRoleOID}
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
	rs.d = roleData{Version: 1, NextOID: FirstRoleOID}
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

// fencedReplica stores the roles in the group's replica only while the
// lease is held, as every other commit.
type fencedReplica struct {
	check func() error // node.Node.CheckFence
	r     RoleReplica
}

func (f fencedReplica) Load(ctx context.Context) ([]byte, error) { return f.r.Load(ctx) }

func (f fencedReplica) Store(ctx context.Context, data []byte) error {
	if f.check() != nil {
		return FencedError()
	}
	if err := f.r.Store(ctx, data); err != nil {
		return sqlerr.New(sqlerr.InternalError, "could not store the roles in the group's bucket; nothing was changed: %v", err).
			WithHint("Retry once NATS is reachable.")
	}
	return nil
}

// FencedError is the error of a write refused because this server no
// longer holds its group's lease.
func FencedError() error {
	return sqlerr.New(sqlerr.CannotConnectNow, "could not write: this server no longer holds its group's lease and is stepping down to standby; nothing was written").
		WithHint("Reconnect with every server of the group in the connection string (host=a,b): the client finds the active one.")
}

// fill makes the maps of a freshly read roleData.
func (rs *Roles) fill() {
	if rs.d.Roles == nil {
		rs.d.Roles = map[string]*Role{}
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
func (rs *Roles) saveLocked() error {
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
func (rs *Roles) update(change func(d *roleData) error) error {
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

// Role returns a copy of a created role (nil for the bootstrap user and
// unknown names).
func (rs *Roles) Role(name string) *Role {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if r := rs.d.Roles[name]; r != nil {
		c := *r
		return &c
	}
	return nil
}

// List returns a copy of every created role, by name.
func (rs *Roles) List() map[string]Role {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	out := make(map[string]Role, len(rs.d.Roles))
	for name, r := range rs.d.Roles {
		out[name] = *r
	}
	return out
}

// RequirePasswords records that the server authenticates clients: from
// then on no session is trusted (Trusts).
func (rs *Roles) RequirePasswords() { rs.passwords.Store(true) }

// Trusts reports whether a session of user logged in without
// authenticating under a name that is no role: only without passwords.
func (rs *Roles) Trusts(user string) bool {
	return !rs.passwords.Load() && !rs.Exists(user)
}

// Exists reports whether name is the bootstrap user or a created role.
func (rs *Roles) Exists(name string) bool {
	return name == BootstrapUser || rs.Role(name) != nil
}

// CreateRole adds role name; it gets the next oid.
func (rs *Roles) CreateRole(name string, r Role) error {
	return rs.update(func(d *roleData) error {
		if _, ok := d.Roles[name]; ok || name == BootstrapUser {
			return sqlerr.New(sqlerr.DuplicateObject, "role %q already exists", name)
		}
		r.OID = d.NextOID
		d.NextOID++
		d.Roles[name] = &r
		return nil
	})
}

// A RoleChange is what ALTER ROLE changes: the fields not nil.
type RoleChange struct {
	Superuser, Login *bool
	SCRAM            *string
}

// AlterRole changes the created role name.
func (rs *Roles) AlterRole(name string, c RoleChange) error {
	return rs.update(func(d *roleData) error {
		r, ok := d.Roles[name]
		if !ok {
			return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
		}
		if c.Superuser != nil {
			r.Superuser = *c.Superuser
		}
		if c.Login != nil {
			r.Login = *c.Login
		}
		if c.SCRAM != nil {
			r.SCRAM = *c.SCRAM
		}
		return nil
	})
}

// DropRoles drops the named roles, all or none. Names are taken in
// order: refuse may refuse one (the bootstrap user, the session's own);
// one that does not exist is an error unless ifExists; one that owns a
// live object or holds a privilege (on a live object, or CREATE on the
// database) is refused with 2BP01, naming them in the DETAIL as
// PostgreSQL does. live maps the ObjectKey of every live object to how
// messages name it ("table t"); database is the database's name; owned
// lists, for a role, the objects it owns that the roles file does not
// record (sinks own their owner), named as in live.
func (rs *Roles) DropRoles(names []string, ifExists bool, refuse func(name string) error, live map[string]string, owned func(role string) []string, database string) error {
	return rs.update(func(d *roleData) error {
		for _, name := range names {
			if err := refuse(name); err != nil {
				return err
			}
			if _, ok := d.Roles[name]; !ok {
				if ifExists {
					continue
				}
				return sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
			}
			if deps := d.dependencies(name, live, owned(name), database); len(deps) > 0 {
				e := sqlerr.New(sqlerr.DependentObjectsExist, "role %q cannot be dropped because some objects depend on it", name).
					WithHint("Drop or give away the objects it owns and REVOKE its privileges first.")
				e.Detail = strings.Join(deps, "\n")
				return e
			}
			delete(d.Roles, name)
			for key, g := range d.Grants {
				delete(g, name)
				if len(g) == 0 {
					delete(d.Grants, key)
				}
			}
			d.DatabaseCreate = without(d.DatabaseCreate, name)
			for key, order := range d.GrantOrder {
				d.GrantOrder[key] = without(order, name)
			}
		}
		return nil
	})
}

// dependencies lists what keeps role from being dropped, as PostgreSQL's
// DETAIL lines name them: CREATE on the database first, then the owned
// and granted live objects by name (owned among them).
func (d *roleData) dependencies(role string, live map[string]string, owned []string, database string) []string {
	var deps, objs []string
	for _, what := range owned {
		objs = append(objs, "owner of "+what)
	}
	for _, r := range d.DatabaseCreate {
		if r == role {
			deps = append(deps, "privileges for database "+database)
		}
	}
	for key, o := range d.Owners {
		if what, ok := live[key]; ok && o == role {
			objs = append(objs, "owner of "+what)
		}
	}
	for key, g := range d.Grants {
		// An owner's own grants are part of owning it, as in PostgreSQL.
		if what, ok := live[key]; ok && len(g[role]) > 0 && d.Owners[key] != role {
			objs = append(objs, "privileges for "+what)
		}
	}
	sort.Slice(objs, func(i, j int) bool { return objectOfLine(objs[i]) < objectOfLine(objs[j]) })
	return append(deps, objs...)
}

// objectOfLine is the object a dependency line names ("table t").
func objectOfLine(line string) string {
	line = strings.TrimPrefix(line, "owner of ")
	return strings.TrimPrefix(line, "privileges for ")
}

// ObjectKey names an object in the roles file: its name and creation time,
// so that a dropped object's grants do not pass to a new object of the
// same name, while an object that ROLLBACK TO brings back (the same
// descriptor) finds its owner and grants again.
func ObjectKey(d *catalog.Descriptor) string {
	return d.Name + "@" + d.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// Owner returns the role that owns d: its creator, or the bootstrap
// superuser for objects created before roles existed or whose creator was
// dropped.
func (rs *Roles) Owner(d *catalog.Descriptor) string {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	if o, ok := rs.d.Owners[ObjectKey(d)]; ok {
		if _, exists := rs.d.Roles[o]; exists || o == BootstrapUser {
			return o
		}
	}
	return BootstrapUser
}

// SetOwner records d's owner unless it has one.
func (rs *Roles) SetOwner(d *catalog.Descriptor, role string) error {
	key := ObjectKey(d)
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

// ChangeOwner gives d to role (ALTER ... OWNER TO).
func (rs *Roles) ChangeOwner(d *catalog.Descriptor, role string) error {
	key := ObjectKey(d)
	return rs.update(func(rd *roleData) error {
		rd.Owners[key] = role
		return nil
	})
}

// Granted reports whether role (or PUBLIC) holds priv on d.
func (rs *Roles) Granted(d *catalog.Descriptor, role, priv string) bool {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	g := rs.d.Grants[ObjectKey(d)]
	for _, r := range []string{role, PublicRole} {
		for _, p := range g[r] {
			if p == priv {
				return true
			}
		}
	}
	return false
}

// Grants returns a copy of the privileges granted on d, by role (PUBLIC
// as "public").
func (rs *Roles) Grants(d *catalog.Descriptor) map[string][]string {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	g := rs.d.Grants[ObjectKey(d)]
	if len(g) == 0 {
		return nil
	}
	out := make(map[string][]string, len(g))
	for r, ps := range g {
		out[r] = append([]string(nil), ps...)
	}
	return out
}

// GrantOrder is d's grantees in the order PostgreSQL's ACL lists them
// (roleData.GrantOrder); set reports whether a GRANT or REVOKE ran on d,
// which makes its ACL not NULL. Grantees of a roles file written before
// the order was kept are missing from it.
func (rs *Roles) GrantOrder(d *catalog.Descriptor) (order []string, set bool) {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	key := ObjectKey(d)
	order, set = rs.d.GrantOrder[key]
	return append([]string(nil), order...), set || len(rs.d.Grants[key]) > 0
}

func (d *roleData) setGrantOrder(key string, order []string) {
	if d.GrantOrder == nil {
		d.GrantOrder = map[string][]string{}
	}
	d.GrantOrder[key] = order
}

// MayCreate reports whether role (or PUBLIC) was granted CREATE on the
// database.
func (rs *Roles) MayCreate(role string) bool {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	for _, r := range rs.d.DatabaseCreate {
		if r == role || r == PublicRole {
			return true
		}
	}
	return false
}

// GrantDatabaseCreate grants (or revokes) CREATE on the database to roles.
func (rs *Roles) GrantDatabaseCreate(roles []string, revoke bool) error {
	return rs.update(func(d *roleData) error {
		for _, r := range roles {
			d.DatabaseCreate = without(d.DatabaseCreate, r)
			if !revoke {
				d.DatabaseCreate = append(d.DatabaseCreate, r)
			}
		}
		return nil
	})
}

// Grant grants (or revokes) privs on objs to roles.
func (rs *Roles) Grant(objs []*catalog.Descriptor, roles, privs []string, revoke bool) error {
	return rs.update(func(d *roleData) error {
		for _, o := range objs {
			key := ObjectKey(o)
			g := d.Grants[key]
			if g == nil {
				g = map[string][]string{}
				d.Grants[key] = g
			}
			order := append([]string{}, d.GrantOrder[key]...)
			for _, r := range roles {
				have := g[r]
				for _, p := range privs {
					have = without(have, p)
					if !revoke {
						have = append(have, p)
					}
				}
				sort.Strings(have)
				if len(have) == 0 {
					delete(g, r)
					order = without(order, r)
				} else {
					g[r] = have
					if !slices.Contains(order, r) {
						order = append(order, r)
					}
				}
			}
			if len(g) == 0 {
				delete(d.Grants, key)
			}
			d.setGrantOrder(key, order)
		}
		return nil
	})
}

// CopyPrivileges gives renamed object to the owner and grants of from (the
// same object under its old name). from's entries stay: they are stale
// once the rename commits (nothing live has its key, as after a DROP), and
// they are the object's again if ROLLBACK TO SAVEPOINT brings the old name
// back.
func (rs *Roles) CopyPrivileges(from, to *catalog.Descriptor) error {
	fk, tk := ObjectKey(from), ObjectKey(to)
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
		if order, ok := d.GrantOrder[fk]; ok {
			d.setGrantOrder(tk, append([]string{}, order...))
		}
		return nil
	})
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
