package e2e

import (
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// TestDropRoleOwningSinkOrSecret: DROP ROLE refuses a role that owns a
// sink or a secret with 2BP01, one DETAIL line per object as for tables;
// once they are dropped the role goes.
func TestDropRoleOwningSinkOrSecret(t *testing.T) {
	srv, admin := startWithAdmin(t)
	exec(t, admin,
		"CREATE USER alice PASSWORD 'alice pw'",
		"CREATE TABLE t (k int PRIMARY KEY, v int)",
		"CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM t",
		"GRANT CREATE ON DATABASE streamdb TO alice",
		"GRANT SELECT ON mv TO alice")
	alice := loginAs(t, srv, "alice", "alice pw")
	exec(t, alice, "CREATE SINK alice_sink FROM mv INTO 'dropped.role'", "CREATE SECRET alice_secret AS 'x'")
	exec(t, admin, "REVOKE CREATE ON DATABASE streamdb FROM alice", "REVOKE SELECT ON mv FROM alice")
	if err := alice.Close(testutil.Context(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}

	pe := wantExecCode(t, admin, "DROP ROLE alice", "2BP01")
	if want := "owner of secret alice_secret\nowner of sink alice_sink"; pe != nil && pe.Detail != want {
		t.Errorf("DROP ROLE alice detail: %q, want %q", pe.Detail, want)
	}
	exec(t, admin, "DROP SINK alice_sink")
	pe = wantExecCode(t, admin, "DROP ROLE alice", "2BP01")
	if want := "owner of secret alice_secret"; pe != nil && pe.Detail != want {
		t.Errorf("DROP ROLE alice detail after DROP SINK: %q, want %q", pe.Detail, want)
	}
	exec(t, admin, "DROP SECRET alice_secret", "DROP ROLE alice")
}
