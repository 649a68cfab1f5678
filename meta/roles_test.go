package meta

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/catalog"
	"streamdb/sqlerr"
)

func sqlState(err error) string {
	var e *sqlerr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// TestRolesPersist: roles, owners and grants are written to the roles
// file and read back; a grant belongs to one incarnation of an object.
func TestRolesPersist(t *testing.T) {
	dir := t.TempDir()
	rs, err := OpenRoles(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t1 := &catalog.Descriptor{Name: "t", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC)}
	if err := rs.CreateRole("alice", Role{Login: true}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Grant([]*catalog.Descriptor{t1}, []string{"alice"}, []string{"SELECT"}, false); err != nil {
		t.Fatal(err)
	}
	if err := rs.SetOwner(t1, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := rs.SetOwner(t1, "bob"); err != nil { // an owner is set once
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, RolesFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}

	rs, err = OpenRoles(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs.Role("alice"); r == nil || !r.Login || r.OID != FirstRoleOID {
		t.Fatalf("alice after reopening: %+v", r)
	}
	if got := rs.Owner(t1); got != "alice" {
		t.Errorf("owner %q, want alice", got)
	}
	if !rs.Granted(t1, "alice", "SELECT") || rs.Granted(t1, "alice", "INSERT") || rs.Granted(t1, "bob", "SELECT") {
		t.Error("grants of t1 wrong")
	}
	// A new table of the same name is another object.
	t2 := &catalog.Descriptor{Name: "t", CreatedAt: t1.CreatedAt.Add(time.Second)}
	if rs.Granted(t2, "alice", "SELECT") || rs.Owner(t2) != BootstrapUser {
		t.Error("a re-created table inherited the old one's grants or owner")
	}
	if !rs.Exists("alice") || !rs.Exists(BootstrapUser) || rs.Exists("bob") {
		t.Error("Exists wrong")
	}
	// Role hands out a copy.
	rs.Role("alice").Superuser = true
	if rs.Role("alice").Superuser {
		t.Error("changing Role's result changed the store")
	}
}

// TestRolesStatements: the changes CREATE, ALTER and DROP ROLE, GRANT,
// REVOKE and ALTER ... OWNER TO make, with their errors; a change that
// fails part way is undone whole.
func TestRolesStatements(t *testing.T) {
	rs, err := OpenRoles(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob", "carol"} {
		if err := rs.CreateRole(name, Role{Login: true}); err != nil {
			t.Fatal(err)
		}
	}
	if got := rs.Role("bob").OID; got != FirstRoleOID+1 {
		t.Errorf("bob's oid %d, want %d", got, FirstRoleOID+1)
	}
	for _, name := range []string{"alice", BootstrapUser} {
		if err := rs.CreateRole(name, Role{}); sqlState(err) != sqlerr.DuplicateObject {
			t.Errorf("CREATE ROLE %s again: %v", name, err)
		}
	}

	yes, scram := true, "SCRAM-SHA-256$x"
	if err := rs.AlterRole("alice", RoleChange{Superuser: &yes, SCRAM: &scram}); err != nil {
		t.Fatal(err)
	}
	if r := rs.Role("alice"); !r.Superuser || !r.Login || r.SCRAM != scram {
		t.Errorf("alice after ALTER: %+v", r)
	}
	if err := rs.AlterRole("nobody", RoleChange{Login: &yes}); sqlState(err) != sqlerr.UndefinedObject {
		t.Errorf("ALTER ROLE nobody: %v", err)
	}

	tbl := &catalog.Descriptor{Name: "t", Kind: catalog.KindTable, CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := rs.Grant([]*catalog.Descriptor{tbl}, []string{"bob"}, []string{"SELECT", "INSERT"}, false); err != nil {
		t.Fatal(err)
	}
	if err := rs.Grant([]*catalog.Descriptor{tbl}, []string{PublicRole}, []string{"INSERT"}, false); err != nil {
		t.Fatal(err)
	}
	if err := rs.Grant([]*catalog.Descriptor{tbl}, []string{"bob"}, []string{"INSERT"}, true); err != nil {
		t.Fatal(err)
	}
	if !rs.Granted(tbl, "bob", "SELECT") || !rs.Granted(tbl, "carol", "INSERT") || rs.Granted(tbl, "carol", "SELECT") || rs.Granted(tbl, "carol", "DELETE") {
		t.Error("grants to bob and PUBLIC wrong")
	}
	if err := rs.Grant([]*catalog.Descriptor{tbl}, []string{PublicRole}, []string{"INSERT"}, true); err != nil {
		t.Fatal(err)
	}
	if rs.Granted(tbl, "bob", "INSERT") {
		t.Error("INSERT revoked from bob and PUBLIC is still granted")
	}
	if err := rs.GrantDatabaseCreate([]string{"carol"}, false); err != nil {
		t.Fatal(err)
	}
	if !rs.MayCreate("carol") || rs.MayCreate("bob") {
		t.Error("CREATE ON DATABASE wrong")
	}

	// A renamed object keeps its owner and grants.
	if err := rs.ChangeOwner(tbl, "bob"); err != nil {
		t.Fatal(err)
	}
	renamed := &catalog.Descriptor{Name: "u", Kind: catalog.KindTable, CreatedAt: tbl.CreatedAt}
	if err := rs.CopyPrivileges(tbl, renamed); err != nil {
		t.Fatal(err)
	}
	if rs.Owner(renamed) != "bob" || !rs.Granted(renamed, "bob", "SELECT") {
		t.Error("the renamed object lost its owner or grants")
	}

	// DROP ROLE: a role that owns a live object or holds a privilege
	// stays, named objects in the detail; the whole statement is undone.
	live := map[string]string{ObjectKey(renamed): "table u"}
	noRefusal := func(string) error { return nil }
	noneOwned := func(string) []string { return nil }
	err = rs.DropRoles([]string{"bob"}, false, noRefusal, live, noneOwned, "streamdb")
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.DependentObjectsExist || se.Detail != "owner of table u" {
		t.Fatalf("DROP ROLE of an owner: %#v", err)
	}
	// A sink records its own owner: owned names it.
	sinkOwned := func(r string) []string {
		if r == "bob" {
			return []string{"sink s"}
		}
		return nil
	}
	err = rs.DropRoles([]string{"bob"}, false, noRefusal, live, sinkOwned, "streamdb")
	if !errors.As(err, &se) || se.Code != sqlerr.DependentObjectsExist || se.Detail != "owner of sink s\nowner of table u" {
		t.Fatalf("DROP ROLE of a sink's owner: %#v", err)
	}
	if err := rs.Grant([]*catalog.Descriptor{renamed}, []string{"carol"}, []string{"SELECT"}, false); err != nil {
		t.Fatal(err)
	}
	err = rs.DropRoles([]string{"carol"}, false, noRefusal, live, noneOwned, "streamdb")
	if !errors.As(err, &se) || se.Code != sqlerr.DependentObjectsExist || se.Detail != "privileges for database streamdb\nprivileges for table u" {
		t.Fatalf("DROP ROLE of a grantee: %#v", err)
	}
	if !rs.Exists("carol") || !rs.MayCreate("carol") {
		t.Error("a failed DROP ROLE dropped carol")
	}
	if err := rs.GrantDatabaseCreate([]string{"carol"}, true); err != nil {
		t.Fatal(err)
	}
	if err := rs.Grant([]*catalog.Descriptor{renamed}, []string{"carol"}, []string{"SELECT"}, true); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if err := rs.DropRoles([]string{"carol", "alice"}, false, func(n string) error {
		if n == "alice" {
			return refused
		}
		return nil
	}, nil, noneOwned, "streamdb"); err != refused || !rs.Exists("carol") {
		t.Fatalf("refused DROP ROLE: %v, carol exists %v", err, rs.Exists("carol"))
	}
	if err := rs.DropRoles([]string{"nobody"}, false, noRefusal, nil, noneOwned, "streamdb"); sqlState(err) != sqlerr.UndefinedObject {
		t.Errorf("DROP ROLE nobody: %v", err)
	}
	if err := rs.DropRoles([]string{"nobody", "carol"}, true, noRefusal, nil, noneOwned, "streamdb"); err != nil {
		t.Fatal(err)
	}
	if rs.Exists("carol") {
		t.Error("carol was not dropped")
	}
	// bob's object is gone: bob may go, his grants with him.
	if err := rs.DropRoles([]string{"bob"}, false, noRefusal, nil, noneOwned, "streamdb"); err != nil {
		t.Fatal(err)
	}
	if rs.Owner(renamed) != BootstrapUser {
		t.Error("an object of a dropped role is not the bootstrap user's")
	}
	if err := rs.CreateRole("bob", Role{}); err != nil {
		t.Fatal(err)
	}
	if rs.Granted(tbl, "bob", "SELECT") {
		t.Error("a dropped role's grants passed to a new role of its name")
	}
	if got := rs.List(); len(got) != 2 || !got["alice"].Superuser || got["bob"].Login {
		t.Errorf("List: %+v", got)
	}
}

// TestRolesTrust: without passwords a name that is no role is trusted;
// once the server requires passwords none is.
func TestRolesTrust(t *testing.T) {
	rs, err := OpenRoles("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.CreateRole("alice", Role{}); err != nil {
		t.Fatal(err)
	}
	if !rs.Trusts("anyone") || rs.Trusts("alice") || rs.Trusts(BootstrapUser) {
		t.Error("trust without passwords wrong")
	}
	rs.RequirePasswords()
	if rs.Trusts("anyone") {
		t.Error("a name was trusted with passwords required")
	}
}

// memReplica is a RoleReplica in memory; fail makes Store fail.
type memReplica struct {
	data   []byte
	stores int
	fail   error
}

func (m *memReplica) Load(context.Context) ([]byte, error) { return m.data, nil }

func (m *memReplica) Store(_ context.Context, data []byte) error {
	if m.fail != nil {
		return m.fail
	}
	m.data = append([]byte(nil), data...)
	m.stores++
	return nil
}

// TestRolesReplica: in a group, the roles in the replica beat the local
// file (written from an earlier term), a change goes to the replica and
// the file, and a change the replica refuses is undone; an empty replica
// is seeded from the local file.
func TestRolesReplica(t *testing.T) {
	dir := t.TempDir()
	old, err := OpenRoles(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.CreateRole("stale", Role{Login: true}); err != nil {
		t.Fatal(err)
	}
	rep := &memReplica{}
	rs, err := OpenRoles(dir, rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rs.Exists("stale") || rep.stores != 1 {
		t.Fatalf("an empty replica is seeded from the file: exists %v, stores %d", rs.Exists("stale"), rep.stores)
	}
	// Another server of the group replaced the roles since.
	rep.data = []byte(`{"version":1,"next_oid":5,"roles":{"alice":{"login":true,"oid":4}}}`)
	rs, err = OpenRoles(dir, rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rs.Exists("stale") || !rs.Exists("alice") || rep.stores != 1 {
		t.Fatalf("the replica's roles win: stale %v, alice %v, stores %d", rs.Exists("stale"), rs.Exists("alice"), rep.stores)
	}
	if err := rs.CreateRole("bob", Role{Login: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep.data), `"bob"`) {
		t.Fatalf("the change is not in the replica: %s", rep.data)
	}
	if file, err := OpenRoles(dir, nil, nil); err != nil || !file.Exists("bob") || file.Exists("stale") {
		t.Fatalf("the local file does not hold the group's roles: %v", err)
	}
	rep.fail = errors.New("lease lost")
	if err := rs.CreateRole("carol", Role{Login: true}); err == nil || rs.Exists("carol") {
		t.Fatalf("a change the replica refused: %v, carol exists %v", err, rs.Exists("carol"))
	}
	if file, _ := OpenRoles(dir, nil, nil); file.Exists("carol") {
		t.Fatal("a change the replica refused reached the local file")
	}
}

// TestRolesFenced: a server that lost its group's lease changes no role
// (57P03, nothing stored), and a replica that fails to store gives an
// error that says nothing changed.
func TestRolesFenced(t *testing.T) {
	dir := t.TempDir()
	rep := &memReplica{}
	var fenced error
	rs, err := OpenRoles(dir, rep, func() error { return fenced })
	if err != nil {
		t.Fatal(err)
	}
	stores := rep.stores
	fenced = errors.New("lease lost")
	if err := rs.CreateRole("alice", Role{}); sqlState(err) != sqlerr.CannotConnectNow || rs.Exists("alice") || rep.stores != stores {
		t.Fatalf("a fenced change: %v, alice exists %v, stores %d", err, rs.Exists("alice"), rep.stores-stores)
	}
	fenced, rep.fail = nil, errors.New("no NATS")
	err = rs.CreateRole("alice", Role{})
	if sqlState(err) != sqlerr.InternalError || !strings.Contains(err.Error(), "nothing was changed") || rs.Exists("alice") {
		t.Fatalf("a change the bucket did not store: %v", err)
	}
	if file, _ := OpenRoles(dir, nil, nil); file.Exists("alice") {
		t.Fatal("a fenced change reached the local file")
	}
}
