package types

import (
	"testing"

	"streamdb/sqlerr"
)

func TestParseArrayText(t *testing.T) {
	for _, c := range []struct {
		in   string
		elem Type
		want string // canonical text, or the SQLSTATE of the error
	}{
		{"{1, 2 ,3}", Int4, "{1,2,3}"},
		{"{}", Int4, "{}"},
		{" { } ", Text, "{}"},
		{`{a,"b c",NULL,"",null,"NULL"}`, Text, `{a,"b c",NULL,"",NULL,"NULL"}`},
		{`{a\,b,"q\"x",c\\d}`, Text, `{"a,b","q\"x","c\\d"}`},
		{`{ x y  ,z}`, Text, `{"x y",z}`},
		{"{t,false}", Bool, "{t,f}"},
		{"{1.50,NaN}", Numeric, "{1.50,NaN}"},
		{"{2020-01-02}", Date, "{2020-01-02}"},
		{"{1,2", Int4, "22P02"},
		{"1,2", Int4, "22P02"},
		{"{1,,2}", Int4, "22P02"},
		{"{1}x", Int4, "22P02"},
		{"{a}", Int4, "22P02"},
		{"{{1,2},{3,4}}", Int4, "0A000"},
	} {
		got, err := ParseText(c.in, ArrayOf(c.elem))
		s := got.S
		if err != nil {
			s = sqlerr.Code(err)
		}
		if s != c.want {
			t.Errorf("ParseText(%q, %s[]) = %q, %v; want %q", c.in, c.elem, got.S, err, c.want)
		}
	}
}

func TestArrayTypeNames(t *testing.T) {
	for _, c := range []struct {
		name string
		want string
		oid  uint32
	}{
		{"int[]", "integer[]", 1007},
		{"_int4", "integer[]", 1007},
		{"int4[3]", "integer[]", 1007},
		{"text[]", "text[]", 1009},
		{"character varying(5)[]", "character varying[]", 1015},
		{"bigint[]", "bigint[]", 1016},
		{"timestamp with time zone[]", "timestamp with time zone[]", 1185},
	} {
		typ, err := Parse(c.name)
		if err != nil || typ.String() != c.want || typ.OID() != c.oid {
			t.Errorf("Parse(%q) = %s (oid %d), %v; want %s (oid %d)", c.name, typ, typ.OID(), err, c.want, c.oid)
			continue
		}
		if back, ok := FromOID(c.oid); !ok || back != typ {
			t.Errorf("FromOID(%d) = %s, %v", c.oid, back, ok)
		}
		if again, err := Parse(typ.String()); err != nil || again != typ {
			t.Errorf("Parse(%q) does not round-trip: %s, %v", typ.String(), again, err)
		}
	}
}
