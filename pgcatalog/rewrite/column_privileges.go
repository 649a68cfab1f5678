package rewrite

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/pgcatalog"
	"streamdb/sqlerr"
)

// columnPrivileges are the privileges has_column_privilege and
// has_any_column_privilege name, as PostgreSQL 15 spells them.
var columnPrivileges = map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "REFERENCES": true}

// checkColumnPrivilegeList refuses, as PostgreSQL does (22023), a
// privilege a column cannot hold (DELETE, TRUNCATE, ...), so that the
// table-level answer below is asked only of column privileges.
func checkColumnPrivilegeList(list ast.ExprNode) error {
	privs, ok := ConstTextOperand(list)
	if !ok {
		return nil // hasTablePrivilege refuses a list that is no literal
	}
	for _, given := range strings.Split(privs, ",") {
		p := strings.ToUpper(strings.Join(strings.Fields(given), " "))
		p, _ = strings.CutSuffix(p, " WITH GRANT OPTION")
		if !columnPrivileges[p] {
			return sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized privilege type: %q", strings.TrimSpace(given))
		}
	}
	return nil
}

// hasAnyColumnPrivilege is has_any_column_privilege([role,] table,
// privileges). streamdb grants privileges on whole tables only, and a
// table's privilege is every column's (as in PostgreSQL), so the answer
// is has_table_privilege's.
func (v *catalogFuncs) hasAnyColumnPrivilege(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function has_any_column_privilege takes an optional role, a table and a privilege list")
	}
	if err := checkColumnPrivilegeList(args[len(args)-1]); err != nil {
		return nil, err
	}
	return v.hasTablePrivilege(args)
}

// hasColumnPrivilege is has_column_privilege([role,] table, column,
// privileges): has_table_privilege's answer (see hasAnyColumnPrivilege),
// once a column given by name in a table given by name is known to exist
// (42703 otherwise, as PostgreSQL).
func (v *catalogFuncs) hasColumnPrivilege(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 3 && len(args) != 4 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function has_column_privilege takes an optional role, a table, a column and a privilege list")
	}
	table, column := args[len(args)-3], args[len(args)-2]
	if err := checkColumnPrivilegeList(args[len(args)-1]); err != nil {
		return nil, err
	}
	tableName, byName := ConstTextOperand(table)
	columnName, colByName := ConstTextOperand(column)
	if byName && colByName {
		oid, err := pgcatalog.ResolveOID(v.e, "regclass", tableName)
		if err != nil {
			return nil, err
		}
		// A sequence has no columns here.
		for _, q := range v.e.Sequences() {
			if q.OID == oid {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", columnName, tableName)
			}
		}
		for _, r := range v.e.Relations() {
			if r.OID != oid {
				continue
			}
			if !slices.ContainsFunc(r.Columns, func(c pgcatalog.Column) bool { return c.Name == columnName }) {
				return nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", columnName, tableName)
			}
		}
	}
	rest := append(append([]ast.ExprNode{}, args[:len(args)-2]...), args[len(args)-1])
	return v.hasTablePrivilege(rest)
}
