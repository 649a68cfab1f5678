package pgcatalog

import (
	"strings"

	"streamdb/expr"
	"streamdb/sqlerr"
)

// Names as PostgreSQL's catalog functions and OID alias types read and
// print them.

// QuoteIdent quotes a name the way PostgreSQL's quote_ident does.
func QuoteIdent(name string) string { return expr.QuoteIdent(name) }

// QuoteIdents quotes names and joins them with ", ".
func QuoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

// ParseOIDText reads an OID written as digits.
func ParseOIDText(s string) (int64, bool) {
	if s == "" || len(s) > 10 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n <= 1<<32-1
}

// UnquoteQualified folds a possibly quoted, possibly qualified name as
// PostgreSQL reads identifiers: "My Table" keeps its case, my_Table folds.
func UnquoteQualified(name string) string {
	var parts []string
	for _, p := range splitQualified(name) {
		if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
			parts = append(parts, strings.ReplaceAll(p[1:len(p)-1], `""`, `"`))
		} else {
			parts = append(parts, strings.ToLower(p))
		}
	}
	return strings.Join(parts, ".")
}

// splitQualified splits a.b at dots outside double quotes.
func splitQualified(s string) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case '.':
			if !quoted {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// ResolveType reads a name as PostgreSQL's regtype input does; a number
// is an OID already.
func ResolveType(name string) (int64, error) {
	name = strings.TrimSpace(name)
	if n, ok := ParseOIDText(name); ok {
		return n, nil
	}
	if t, ok := TypeByName(strings.TrimPrefix(UnquoteQualified(name), "pg_catalog.")); ok {
		return t.OID, nil
	}
	return 0, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", name)
}

// CatalogFuncs are the catalog and session functions whose calls the
// session substitutes by their answers before it binds a statement
// (version(), obj_description(oid), pg_get_indexdef(oid), ...): pg_proc
// lists them without asking the function registry.
var CatalogFuncs = map[string]bool{
	"version": true, "current_database": true, "current_catalog": true, "current_schema": true,
	"current_setting": true, "obj_description": true, "col_description": true, "shobj_description": true,
	"pg_get_viewdef": true, "pg_get_indexdef": true, "pg_get_constraintdef": true, "pg_get_userbyid": true,
	"pg_get_expr": true, "pg_encoding_to_char": true, "has_table_privilege": true,
	"has_schema_privilege": true, "has_database_privilege": true, "has_column_privilege": true,
	"has_any_column_privilege": true, "has_sequence_privilege": true, "has_function_privilege": true, "pg_function_is_visible": true, "pg_type_is_visible": true,
	"pg_get_function_result": true, "pg_get_function_arguments": true,
	"pg_get_function_identity_arguments": true, "pg_backend_pid": true, "parse_ident": true, "pg_blocking_pids": true,
	"set_config": true, "pg_get_function_sqlbody": true, "to_regproc": true, "to_regprocedure": true,
	"to_regtype": true, "to_regclass": true, "to_regnamespace": true, "to_regrole": true,
	"pg_get_serial_sequence": true,
	// Answered as PostgreSQL 15 answers them for streamdb's objects
	// (pg_dump calls them).
	"pg_is_in_recovery": true, "acldefault": true, "pg_get_triggerdef": true, "pg_get_statisticsobjdef": true,
	"pg_get_ruledef": true, "pg_get_policydef": true,
}

// ParseIdent is parse_ident(s): the names of a qualified identifier
// ('a."B".c' is {a,B,c}). Unquoted names fold to lower case, quoted ones
// keep theirs ("" is a quote inside).
func ParseIdent(s string) ([]string, error) {
	bad := func() ([]string, error) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "string is not a valid identifier: \"%s\"", s)
	}
	var out []string
	i := 0
	for {
		for i < len(s) && s[i] == ' ' {
			i++
		}
		var name strings.Builder
		switch {
		case i < len(s) && s[i] == '"':
			i++
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					return bad()
				}
				name.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' {
					name.WriteByte('"')
					i++
					continue
				}
				break
			}
			if name.Len() == 0 {
				return bad()
			}
		default:
			start := i
			for i < len(s) && s[i] != '.' && s[i] != ' ' {
				i++
			}
			if i == start {
				return bad()
			}
			name.WriteString(strings.ToLower(s[start:i]))
		}
		out = append(out, name.String())
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		if s[i] != '.' {
			return bad()
		}
		i++
	}
}
