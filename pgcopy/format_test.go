package pgcopy

import (
	"errors"
	"testing"

	"streamdb/sqlerr"
)

// TestNewFormat checks the defaults of each format and the option
// refusals, with the SQLSTATE and message PostgreSQL 15 gives.
func TestNewFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want Format
	}{
		{"text defaults", Options{}, Format{Kind: Text, Delimiter: '\t', Null: `\N`}},
		{"csv defaults", Options{Options: map[string]string{"format": "CSV"}},
			Format{Kind: CSV, Delimiter: ',', Quote: '"', Escape: '"'}},
		{"binary", Options{Options: map[string]string{"format": "binary", "encoding": "UTF-8", "freeze": "true"}},
			Format{Kind: Binary, Delimiter: '\t', Null: `\N`}},
		{"csv options", Options{From: true, Options: map[string]string{"format": "csv", "delimiter": ";", "null": "NULL",
			"quote": "'", "escape": `\`, "header": "match"}, ForceNotNull: []string{"a"}, ForceNull: []string{"b"}},
			Format{Kind: CSV, Delimiter: ';', Null: "NULL", Quote: '\'', Escape: '\\', Header: true, HeaderMatch: true,
				ForceNotNull: map[string]bool{"a": true}, ForceNull: map[string]bool{"b": true}}},
		{"force quote all", Options{Options: map[string]string{"format": "csv", "header": "on"}, ForceQuote: []string{"*"}},
			Format{Kind: CSV, Delimiter: ',', Quote: '"', Escape: '"', Header: true, ForceQuoteAll: true}},
		{"force quote", Options{Options: map[string]string{"format": "csv", "header": "off"}, ForceQuote: []string{"x"}},
			Format{Kind: CSV, Delimiter: ',', Quote: '"', Escape: '"', ForceQuote: map[string]bool{"x": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFormat(&tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind != tc.want.Kind || f.Delimiter != tc.want.Delimiter || f.Null != tc.want.Null || f.Quote != tc.want.Quote ||
				f.Escape != tc.want.Escape || f.Header != tc.want.Header || f.HeaderMatch != tc.want.HeaderMatch ||
				f.ForceQuoteAll != tc.want.ForceQuoteAll || !sameSet(f.ForceQuote, tc.want.ForceQuote) ||
				!sameSet(f.ForceNotNull, tc.want.ForceNotNull) || !sameSet(f.ForceNull, tc.want.ForceNull) {
				t.Errorf("NewFormat = %+v, want %+v", *f, tc.want)
			}
		})
	}
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func TestNewFormatRefusals(t *testing.T) {
	csv := func(kv ...string) map[string]string {
		m := map[string]string{"format": "csv"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		opts Options
		code string
		msg  string
	}{
		{Options{Options: map[string]string{"format": "json"}}, sqlerr.InvalidParameterValue, `COPY format "json" not recognized`},
		{Options{Options: map[string]string{"encoding": "latin1"}}, sqlerr.FeatureNotSupported, `COPY encoding "latin1" is not supported`},
		{Options{Options: map[string]string{"format": "binary", "delimiter": ","}}, sqlerr.SyntaxError, "cannot specify DELIMITER in BINARY mode"},
		{Options{Options: map[string]string{"quote": "'"}}, sqlerr.FeatureNotSupported, "COPY quote available only in CSV mode"},
		{Options{Options: csv("delimiter", ";;")}, sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character"},
		{Options{Options: csv("escape", "é")}, sqlerr.FeatureNotSupported, "COPY escape must be a single one-byte character"},
		{Options{Options: map[string]string{"delimiter": "a"}}, sqlerr.InvalidParameterValue, `COPY delimiter cannot be "a"`},
		{Options{Options: csv("delimiter", "\n")}, sqlerr.InvalidParameterValue, `COPY delimiter cannot be "\n"`},
		{Options{Options: map[string]string{"format": "binary", "null": "x"}}, sqlerr.SyntaxError, "cannot specify NULL in BINARY mode"},
		{Options{Options: map[string]string{"null": "a\nb"}}, sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return"},
		{Options{Options: map[string]string{"format": "binary", "header": "true"}}, sqlerr.FeatureNotSupported, "cannot specify HEADER in BINARY mode"},
		{Options{Options: map[string]string{"header": "match"}}, sqlerr.FeatureNotSupported, `cannot use "match" with HEADER in COPY TO`},
		{Options{Options: map[string]string{"header": "maybe"}}, sqlerr.InvalidParameterValue, `header requires a Boolean value or "match"`},
		{Options{Options: map[string]string{"oids": "true"}}, sqlerr.SyntaxError, `option "oids" not recognized`},
		{Options{Options: csv("quote", ",")}, sqlerr.InvalidParameterValue, "COPY delimiter and quote must be different"},
		{Options{Options: map[string]string{"null": "a\tb"}}, sqlerr.InvalidParameterValue, "COPY delimiter must not appear in the NULL specification"},
		{Options{Options: csv("null", `"x"`)}, sqlerr.InvalidParameterValue, "CSV quote character must not appear in the NULL specification"},
		{Options{ForceQuote: []string{"a"}}, sqlerr.FeatureNotSupported, "COPY force quote available only in CSV mode"},
		{Options{From: true, Options: csv(), ForceQuote: []string{"*"}}, sqlerr.FeatureNotSupported, "COPY force quote cannot be used with COPY FROM"},
		{Options{From: true, Options: csv(), ForceQuote: []string{"a"}}, sqlerr.FeatureNotSupported, "COPY force quote cannot be used with COPY FROM"},
		{Options{Options: csv(), ForceNotNull: []string{"a"}}, sqlerr.FeatureNotSupported, "COPY force not null cannot be used with COPY TO"},
		{Options{Options: csv(), ForceNull: []string{"a"}}, sqlerr.FeatureNotSupported, "COPY force null cannot be used with COPY TO"},
	} {
		_, err := NewFormat(&tc.opts)
		var e *sqlerr.Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Message != tc.msg {
			t.Errorf("NewFormat(%+v) = %v, want %s %q", tc.opts, err, tc.code, tc.msg)
		}
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Text: "text", CSV: "csv", Binary: "binary"} {
		if k.String() != want {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), want)
		}
	}
}
