package pgcatalog

import (
	"fmt"
	"strings"

	"streamdb/sqlerr"
	"streamdb/types"
)

// The answers of the catalog functions over the objects of the engine
// (obj_description, pg_get_viewdef, pg_get_indexdef,
// pg_get_constraintdef, pg_get_userbyid, pg_get_function_result, ...)
// and the input and output of the OID alias types (regclass, regtype,
// regproc, regprocedure, regnamespace, regrole). The session turns them
// into expressions when it prepares a statement (sql/pgcatalog_funcs.go).

// Answer is what a catalog function answers for one OID.
type Answer struct {
	OID  int64
	Text string
}

// ObjDescriptions are obj_description(oid)'s answers: the descriptions of
// schema public and of the relations (pg_description's rows of objsubid
// 0); proc: obj_description(oid, 'pg_proc'), the functions'.
func ObjDescriptions(e Engine, proc bool) []Answer {
	var out []Answer
	if proc {
		for _, p := range Procs() {
			if p.Description != "" {
				out = append(out, Answer{p.OID, p.Description})
			}
		}
		return out
	}
	for _, row := range DescriptionRows(e) {
		if row[2].I == 0 {
			out = append(out, Answer{row[0].I, row[3].S})
		}
	}
	return out
}

// ViewDefs are pg_get_viewdef's answers: the views' queries.
func ViewDefs(e Engine) []Answer {
	var out []Answer
	for _, r := range e.Relations() {
		if r.Query != "" {
			out = append(out, Answer{r.OID, r.ViewDef()})
		}
	}
	return out
}

// IndexDefs are pg_get_indexdef(oid)'s answers: every index's
// definition.
func IndexDefs(e Engine) []Answer {
	var out []Answer
	for _, r := range e.Relations() {
		for _, x := range r.CatalogIndexes() {
			out = append(out, Answer{x.OID(), x.Def()})
		}
		if len(r.PrimaryKey) > 0 {
			out = append(out, Answer{r.OID + PKOIDBase, r.IndexDef()})
		}
	}
	return out
}

// IndexColumnDef is pg_get_indexdef(index, column, pretty)'s answer for
// one index and column number: the column's name, or for column 0 the
// index's definition.
type IndexColumnDef struct {
	OID, Column int64
	Text        string
}

// IndexColumnDefs are pg_get_indexdef(index, column, pretty)'s answers.
func IndexColumnDefs(e Engine) []IndexColumnDef {
	var out []IndexColumnDef
	for _, r := range e.Relations() {
		for i, k := range r.PrimaryKey {
			out = append(out, IndexColumnDef{r.OID + PKOIDBase, int64(i + 1), QuoteIdent(k)})
		}
		out = append(out, IndexColumnDef{r.OID + PKOIDBase, 0, r.IndexDef()})
		for _, x := range r.CatalogIndexes() {
			for i, k := range x.Columns {
				out = append(out, IndexColumnDef{x.OID(), int64(i + 1), QuoteIdent(k.Name)})
			}
			out = append(out, IndexColumnDef{x.OID(), 0, x.Def()})
		}
	}
	return out
}

// ConstraintDefs are pg_get_constraintdef(oid, pretty)'s answers. pretty
// leaves a CHECK's outer parentheses out, as psql's \d shows it.
func ConstraintDefs(e Engine, pretty bool) []Answer {
	var out []Answer
	for _, r := range e.Relations() {
		out = append(out, r.constraintDefs(pretty)...)
		if len(r.PrimaryKey) > 0 {
			out = append(out, Answer{r.OID + 2*PKOIDBase, r.ConstraintDef()})
		}
	}
	return out
}

// FunctionResults are pg_get_function_result's answers.
func FunctionResults() []Answer {
	var out []Answer
	for _, p := range Procs() {
		out = append(out, Answer{p.OID, p.Result()})
	}
	return out
}

// FunctionArguments are pg_get_function_arguments' (and
// pg_get_function_identity_arguments') answers.
func FunctionArguments() []Answer {
	var out []Answer
	for _, p := range Procs() {
		out = append(out, Answer{p.OID, p.Arguments()})
	}
	return out
}

// UserNames are pg_get_userbyid's answers.
func UserNames(e Engine) []Answer {
	var out []Answer
	for _, r := range e.Roles() {
		out = append(out, Answer{r.OID, r.Name})
	}
	return out
}

// RegNameTypes are the OID alias types whose input reads a name.
var RegNameTypes = map[string]bool{
	"regtype": true, "regclass": true, "regproc": true, "regprocedure": true, "regnamespace": true, "regrole": true,
}

// ResolveOID reads a name as PostgreSQL's regclass, regtype, regproc,
// regprocedure, regnamespace or regrole input does; a number is an OID
// already.
func ResolveOID(e Engine, typ, name string) (int64, error) {
	name = strings.TrimSpace(name)
	if n, ok := ParseOIDText(name); ok {
		return n, nil
	}
	unquoted := UnquoteQualified(name)
	switch typ {
	case "regclass":
		if r, ok := ClassRowByName(e, unquoted); ok {
			return r.OID, nil
		}
		return 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	case "regtype":
		return ResolveType(name)
	case "regproc", "regprocedure":
		return ResolveProc(typ, name)
	case "regnamespace":
		switch unquoted {
		case "pg_catalog":
			return NamespacePgCatalog, nil
		case "public":
			return NamespacePublic, nil
		case "information_schema":
			return NamespaceInfoSchema, nil
		}
		return 0, sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", name)
	case "regrole":
		for _, r := range e.Roles() {
			if r.Name == unquoted {
				return r.OID, nil
			}
		}
		return 0, sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", name)
	}
	return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", typ, name)
}

// OIDDisplay is how PostgreSQL prints name::typ for the OID types with
// names: the relation, type or function name ("" for plain oid).
func OIDDisplay(e Engine, typ, name string) (string, error) {
	oid, err := ResolveOID(e, typ, name)
	if err != nil {
		return "", err
	}
	switch typ {
	case "regclass":
		for _, r := range ClassRows(e) {
			if r.OID == oid {
				if r.Namespace == NamespaceInfoSchema {
					return "information_schema." + QuoteIdent(r.Name), nil
				}
				return QuoteIdent(r.Name), nil
			}
		}
	case "regtype":
		if t, ok := types.FromOID(uint32(oid)); ok && t != types.Unknown {
			return t.String(), nil
		}
		if t, ok := TypeByOID(oid); ok {
			return t.Name, nil
		}
	case "regproc", "regprocedure":
		if shown, ok := ProcDisplay(typ, oid); ok {
			return shown, nil
		}
	case "regnamespace":
		return UnquoteQualified(name), nil
	case "regrole":
		return UnquoteQualified(name), nil
	default:
		return "", nil
	}
	return fmt.Sprint(oid), nil
}

// RegNames are the names the input of typ reads, lower-cased, with their
// OIDs.
func RegNames(e Engine, typ string) map[string]int64 {
	out := map[string]int64{}
	switch typ {
	case "regtype":
		for _, t := range Types {
			out[t.Name] = t.OID
			out["pg_catalog."+t.Name] = t.OID
			if st, ok := types.FromOID(uint32(t.OID)); ok && st != types.Unknown {
				out[st.String()] = t.OID
			}
		}
		for _, alias := range []string{"int", "integer", "smallint", "bigint", "real", "float", "double precision",
			"boolean", "decimal", "character varying", "timestamp without time zone", "timestamp with time zone",
			"time without time zone", "time with time zone"} {
			if t, ok := TypeByName(alias); ok {
				out[alias] = t.OID
				out[alias+"[]"] = t.Array
			}
		}
	case "regclass":
		for _, r := range ClassRows(e) {
			switch r.Namespace {
			case NamespacePublic:
				out[strings.ToLower(r.Name)] = r.OID
				out["public."+strings.ToLower(r.Name)] = r.OID
			case NamespacePgCatalog:
				if _, ok := out[r.Name]; !ok {
					out[r.Name] = r.OID
				}
				out["pg_catalog."+r.Name] = r.OID
			case NamespaceInfoSchema:
				out["information_schema."+r.Name] = r.OID
			}
		}
	case "regproc", "regprocedure":
		for _, p := range Procs() {
			if _, ok := out[p.Name]; !ok {
				out[p.Name] = p.OID
				out["pg_catalog."+p.Name] = p.OID
			}
		}
	case "regnamespace":
		out["pg_catalog"], out["public"], out["information_schema"] = NamespacePgCatalog, NamespacePublic, NamespaceInfoSchema
	case "regrole":
		for _, r := range e.Roles() {
			out[strings.ToLower(r.Name)] = r.OID
		}
	}
	return out
}
