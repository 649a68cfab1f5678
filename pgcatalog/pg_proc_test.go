package pgcatalog

import "testing"

// TestBuiltinProcs: pg_proc keeps PostgreSQL's rows for what streamdb
// implements and drops the signatures the registry refuses.
func TestBuiltinProcs(t *testing.T) {
	sigs := map[string]bool{}
	for _, p := range Procs() {
		sigs[p.Name+"("+p.Arguments()+")"] = true
	}
	for _, want := range []string{"lower(text)", "round(numeric, integer)", "string_agg(text, text)",
		"row_number()", "now()", "generate_series(bigint, bigint)", "int4in(cstring, oid, integer)", "version()"} {
		if !sigs[want] {
			t.Errorf("pg_proc lacks %s", want)
		}
	}
	// PostgreSQL's lower(anyrange) and md5(bytea): no range types, and
	// the registry has no md5 of bytea.
	for _, absent := range []string{"lower(anyrange)", "md5(bytea)"} {
		if sigs[absent] {
			t.Errorf("pg_proc lists %s, which streamdb does not have", absent)
		}
	}
}
