package tools

import (
	"testing"

	"streamdb/tests/testutil"
)

// TestPsycopgCatalogLikePostgres: psycopg 3's TypeInfo.fetch finds types
// by name (and None for an unknown one), and Python lists bind into array
// columns of a wider element type, with the same answers from streamdb as
// from PostgreSQL 15.
func TestPsycopgCatalogLikePostgres(t *testing.T) {
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	pg := testutil.StartPostgres(t)
	got, want := runScript(t, "tool_catalog.py", srv.DSN()), runScript(t, "tool_catalog.py", pg.DSN())
	if len(want) < 11 {
		t.Fatalf("PostgreSQL gave %d checks: %v", len(want), want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s:\n got  %s\n want %s", k, got[k], w)
		}
	}
}
