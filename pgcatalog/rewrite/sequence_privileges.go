package rewrite

import (
	"maps"
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// sequencePrivileges are the privileges has_sequence_privilege names, as
// PostgreSQL 15 spells them.
var sequencePrivileges = map[string]bool{"USAGE": true, "SELECT": true, "UPDATE": true}

// hasSequencePrivilege is has_sequence_privilege([role,] sequence,
// privileges): whether the role holds any of the privileges on the
// sequence, as PostgreSQL answers it. A name must be a sequence's (42P01
// when nothing has it, 42809 when a relation of another kind does); an
// OID that is no sequence's gives NULL.
func (v *catalogFuncs) hasSequencePrivilege(args []ast.ExprNode) (ast.ExprNode, error) {
	role, seq, asked, err := v.privilegeArgs("has_sequence_privilege", "sequence", args, sequencePrivileges)
	if err != nil {
		return nil, err
	}
	held := role.Holds(asked)
	answers := map[int64]bool{}
	for _, q := range v.e.Sequences() {
		answers[q.OID] = held[q.OID]
	}
	if name, ok := ConstTextOperand(seq); ok {
		oid, err := pgcatalog.ResolveOID(v.e, "regclass", name)
		if err != nil {
			return nil, err
		}
		yes, isSeq := answers[oid]
		if !isSeq {
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is not a sequence", pgcatalog.UnquoteQualified(name))
		}
		return BoolExpr(yes), nil
	}
	if !isOIDColumn(seq) {
		seq = RegCastOfText(v.e, seq, "regclass", true)
	}
	// CASE seq WHEN oid THEN held ... END: NULL for any other OID.
	c := &ast.CaseExpr{Value: seq}
	for _, oid := range slices.Sorted(maps.Keys(answers)) {
		c.WhenClauses = append(c.WhenClauses, &ast.WhenClause{Expr: value(oid), Result: BoolExpr(answers[oid])})
	}
	if len(c.WhenClauses) == 0 {
		return value(nil), nil
	}
	return c, nil
}
