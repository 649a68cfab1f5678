package pgcatalog

import (
	"errors"
	"strings"
	"testing"

	"streamdb/sqlerr"
)

func TestParseIdent(t *testing.T) {
	for in, want := range map[string]string{
		`a."B".c`:          "a|B|c",
		`My_Table`:         "my_table",
		` public . "x y" `: "public|x y",
		`"a""b"`:           `a"b`,
	} {
		got, err := ParseIdent(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("parse_ident(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"a.", `""`, `"a`, "a b", ""} {
		_, err := ParseIdent(in)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != sqlerr.InvalidParameterValue {
			t.Errorf("parse_ident(%q): error %v, want SQLSTATE %s", in, err, sqlerr.InvalidParameterValue)
		}
	}
}

func TestUnquoteQualified(t *testing.T) {
	for in, want := range map[string]string{
		`Public."My Table"`: "public.My Table",
		`"a.b".C`:           "a.b.c",
		`"x""y"`:            `x"y`,
	} {
		if got := UnquoteQualified(in); got != want {
			t.Errorf("UnquoteQualified(%q) = %q, want %q", in, got, want)
		}
	}
}
