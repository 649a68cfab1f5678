package pgcatalog

import (
	"errors"
	"testing"

	"streamdb/sqlerr"
)

func TestResolveOID(t *testing.T) {
	e := shopEngine()
	e.roles = []Role{{OID: 10, Name: BootstrapUser}, {OID: 16390, Name: "Alice"}}
	for _, c := range []struct {
		typ, name string
		want      int64
		shown     string
	}{
		{"regclass", "parent", FirstUserOID + 1, "parent"},
		{"regclass", "public.PARENT", FirstUserOID + 1, "parent"},
		{"regclass", "pg_class", 1259, "pg_class"},
		{"regclass", "information_schema.tables", 0, "information_schema.tables"},
		{"regclass", "12345", 12345, "12345"},
		{"regtype", "integer", 23, "integer"},
		{"regtype", "pg_catalog.int8", 20, "bigint"},
		{"regproc", "lower", 0, "lower"},
		{"regprocedure", "lower(text)", 870, "lower(text)"},
		{"regnamespace", "information_schema", NamespaceInfoSchema, "information_schema"},
		{"regrole", `"Alice"`, 16390, "Alice"},
	} {
		oid, err := ResolveOID(e, c.typ, c.name)
		if err != nil {
			t.Errorf("%q::%s: %v", c.name, c.typ, err)
			continue
		}
		if c.want != 0 && oid != c.want {
			t.Errorf("%q::%s is %d, want %d", c.name, c.typ, oid, c.want)
		}
		if shown, err := OIDDisplay(e, c.typ, c.name); err != nil || shown != c.shown {
			t.Errorf("%q::%s shows %q (%v), want %q", c.name, c.typ, shown, err, c.shown)
		}
	}
	for _, c := range []struct{ typ, name, code string }{
		{"regclass", "nope", sqlerr.UndefinedTable},
		{"regtype", "nope", sqlerr.UndefinedObject},
		{"regproc", "nope", sqlerr.UndefinedFunction},
		{"regproc", "round", sqlerr.AmbiguousFunction},
		{"regnamespace", "nope", sqlerr.InvalidSchemaName},
		{"regrole", "alice", sqlerr.UndefinedObject},
	} {
		_, err := ResolveOID(e, c.typ, c.name)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != c.code {
			t.Errorf("%q::%s: error %v, want SQLSTATE %s", c.name, c.typ, err, c.code)
		}
	}
}

func TestDefinitionFunctions(t *testing.T) {
	e := shopEngine()
	byOID := func(as []Answer) map[int64]string {
		m := map[int64]string{}
		for _, a := range as {
			m[a.OID] = a.Text
		}
		return m
	}
	cons := byOID(ConstraintDefs(e, true))
	if got := cons[FirstUserOID+1+2*PKOIDBase]; got != "PRIMARY KEY (id)" {
		t.Errorf("parent's primary key: %q", got)
	}
	found := false
	for _, d := range cons {
		found = found || d == "CHECK (amount >= 0)"
	}
	if !found {
		t.Errorf("pretty pg_get_constraintdef of the CHECK: %v", cons)
	}
	idx := byOID(IndexDefs(e))
	if got := idx[FirstUserOID+2+PKOIDBase]; got != "CREATE UNIQUE INDEX child_pkey ON public.child USING btree (id)" {
		t.Errorf("child's primary key index: %q", got)
	}
	views := byOID(ViewDefs(e))
	if got := views[FirstUserOID+3]; got != " SELECT pid FROM child;" {
		t.Errorf("pg_get_viewdef: %q", got)
	}
	for _, d := range IndexColumnDefs(e) {
		if d.OID == FirstUserOID+2+PKOIDBase+1<<20 && d.Column == 1 && d.Text != "at" {
			t.Errorf("pg_get_indexdef(child_at_idx, 1): %q", d.Text)
		}
	}
}
