package sql

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/catalog"
)

// TestRoleStorePersists: roles, owners and grants are written to the roles
// file and read back; a grant belongs to one incarnation of an object.
func TestRoleStorePersists(t *testing.T) {
	dir := t.TempDir()
	rs, err := openRoles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t1 := &catalog.Descriptor{Name: "t", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 1, time.UTC)}
	if err := rs.update(func(d *roleData) error {
		d.Roles["alice"] = &roleDef{Login: true, OID: d.NextOID}
		d.NextOID++
		d.Grants[objectKey(t1)] = map[string][]string{"alice": {"SELECT"}}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := rs.setOwner(t1, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := rs.setOwner(t1, "bob"); err != nil { // an owner is set once
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, RolesFile+".tmp")); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind: %v", err)
	}

	rs, err = openRoles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := rs.role("alice"); r == nil || !r.Login || r.OID != firstRoleOID {
		t.Fatalf("alice after reopening: %+v", r)
	}
	if got := rs.owner(t1); got != "alice" {
		t.Errorf("owner %q, want alice", got)
	}
	if !rs.granted(t1, "alice", "SELECT") || rs.granted(t1, "alice", "INSERT") || rs.granted(t1, "bob", "SELECT") {
		t.Error("grants of t1 wrong")
	}
	// A new table of the same name is another object.
	t2 := &catalog.Descriptor{Name: "t", CreatedAt: t1.CreatedAt.Add(time.Second)}
	if rs.granted(t2, "alice", "SELECT") || rs.owner(t2) != BootstrapUser {
		t.Error("a re-created table inherited the old one's grants or owner")
	}
	// A failed change is undone.
	if err := rs.update(func(d *roleData) error {
		delete(d.Roles, "alice")
		return os.ErrPermission
	}); err == nil {
		t.Fatal("update error lost")
	}
	if !rs.exists("alice") || !rs.exists(BootstrapUser) || rs.exists("bob") {
		t.Error("exists wrong")
	}
}

func TestScramOf(t *testing.T) {
	v, err := scramOf("secret")
	if err != nil || len(v) < 20 {
		t.Fatalf("scramOf: %q, %v", v, err)
	}
	again, err := scramOf(v) // a verifier is kept as given
	if err != nil || again != v {
		t.Fatalf("verifier: %q, %v", again, err)
	}
	if _, err := scramOf("SCRAM-SHA-256$bad"); err == nil {
		t.Error("a malformed verifier was accepted")
	}
	if _, err := scramOf("md5" + "0123456789abcdef0123456789abcdef"); err == nil {
		t.Error("an md5 hash was accepted")
	}
	if v, err := scramOf(""); err != nil || v != "" {
		t.Errorf("empty password: %q, %v", v, err)
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

// TestRoleStoreReplica: in a group, the roles in the replica beat the
// local file (written from an earlier term), a change goes to the
// replica and the file, and a change the replica refuses is undone; an
// empty replica is seeded from the local file.
func TestRoleStoreReplica(t *testing.T) {
	dir := t.TempDir()
	old, err := openRoles(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.update(func(d *roleData) error {
		d.Roles["stale"] = &roleDef{Login: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	rep := &memReplica{}
	rs, err := openRoles(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	if !rs.exists("stale") || rep.stores != 1 {
		t.Fatalf("an empty replica is seeded from the file: exists %v, stores %d", rs.exists("stale"), rep.stores)
	}
	// Another server of the group replaced the roles since.
	rep.data = []byte(`{"version":1,"next_oid":5,"roles":{"alice":{"login":true,"oid":4}}}`)
	rs, err = openRoles(dir, rep)
	if err != nil {
		t.Fatal(err)
	}
	if rs.exists("stale") || !rs.exists("alice") || rep.stores != 1 {
		t.Fatalf("the replica's roles win: stale %v, alice %v, stores %d", rs.exists("stale"), rs.exists("alice"), rep.stores)
	}
	if err := rs.update(func(d *roleData) error {
		d.Roles["bob"] = &roleDef{Login: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep.data), `"bob"`) {
		t.Fatalf("the change is not in the replica: %s", rep.data)
	}
	if file, err := openRoles(dir, nil); err != nil || !file.exists("bob") || file.exists("stale") {
		t.Fatalf("the local file does not hold the group's roles: %v", err)
	}
	rep.fail = errors.New("lease lost")
	if err := rs.update(func(d *roleData) error {
		d.Roles["carol"] = &roleDef{Login: true}
		return nil
	}); err == nil || rs.exists("carol") {
		t.Fatalf("a change the replica refused: %v, carol exists %v", err, rs.exists("carol"))
	}
	if file, _ := openRoles(dir, nil); file.exists("carol") {
		t.Fatal("a change the replica refused reached the local file")
	}
}
