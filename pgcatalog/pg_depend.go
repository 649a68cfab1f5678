package pgcatalog

import "streamdb/types"

// OIDs of the catalogs a pg_depend row names its objects by (classid,
// refclassid).
const (
	ClassOID   = 1259 // pg_class: relations
	AttrdefOID = 2604 // pg_attrdef: column defaults
	RewriteOID = 2618 // pg_rewrite: rules
)

// RuleOIDBase offsets a view's OID to the OID of its _RETURN rule in
// pg_rewrite.
const RuleOIDBase = 1 << 29

// DependColumns are pg_depend's columns.
var DependColumns = cols("classid", types.Int8, "objid", types.Int8, "objsubid", types.Int4, "refclassid", types.Int8,
	"refobjid", types.Int8, "refobjsubid", types.Int4, "deptype", types.Text)

// DependRows are pg_depend's rows, as PostgreSQL records them for the
// objects tools look up through it: a sequence owned by a table column
// ('i' for an identity column's, 'a' for a serial column's or one of
// OWNED BY: pg_dump dumps an identity sequence with its column and an
// owned one with ALTER SEQUENCE ... OWNED BY), a view's rule, part of
// its view ('i') and reading each relation the view reads ('n': pg_dump
// orders a view after them), and a column default calling nextval on a
// sequence ('n': pg_dump creates the sequence before it sets the
// default).
func DependRows(e Engine) []types.Row {
	var rows []types.Row
	dep := func(class, obj, refclass, ref, refsub int64, typ string) {
		rows = append(rows, types.Row{i(class), i(obj), i(0), i(refclass), i(ref), i(refsub), s(typ)})
	}
	for _, q := range e.OwnedSequences() {
		typ := "a"
		if q.Identity {
			typ = "i"
		}
		dep(ClassOID, q.OID, ClassOID, q.TableOID, q.Column, typ)
	}
	for _, v := range e.Views() {
		dep(RewriteOID, v.OID+RuleOIDBase, ClassOID, v.OID, 0, "i")
		for _, r := range v.Reads {
			dep(RewriteOID, v.OID+RuleOIDBase, ClassOID, r, 0, "n")
		}
	}
	for _, d := range e.DefaultSequences() {
		dep(AttrdefOID, d.AttrdefOID, ClassOID, d.SequenceOID, 0, "n")
	}
	return rows
}

// RewriteColumns are pg_rewrite's columns.
var RewriteColumns = cols("oid", types.Int8, "rulename", types.Text, "ev_class", types.Int8, "ev_type", types.Text,
	"ev_enabled", types.Text, "is_instead", types.Bool, "ev_qual", types.Text, "ev_action", types.Text)

// RewriteRows are pg_rewrite's rows: each view's _RETURN rule.
func RewriteRows(e Engine) []types.Row {
	var rows []types.Row
	for _, v := range e.Views() {
		rows = append(rows, types.Row{i(v.OID + RuleOIDBase), s("_RETURN"), i(v.OID), s("1"), s("O"), types.NewBool(true),
			types.Null, types.Null})
	}
	return rows
}

func init() {
	register("pg_catalog.pg_depend", DependColumns, DependRows)
	register("pg_catalog.pg_rewrite", RewriteColumns, RewriteRows)
}
