package sql

import (
	"context"

	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/config"
	"streamdb/sqlerr"
)

// setConfigCall substitutes set_config(name, value, is_local) by the new
// value, as PostgreSQL returns it, and queues the change itself for when
// the statement runs (a statement prepared and never executed changes
// nothing). is_local true is SET LOCAL; a NULL value is RESET. The
// arguments must be constants: the change is known when the statement is
// prepared.
func (v *catalogFuncs) setConfigCall(args []ast.ExprNode) (ast.ExprNode, error) {
	if len(args) != 3 {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function set_config takes a setting name, a value and is_local")
	}
	name, ok := constString(args[0])
	val, valueOK := constString(args[1])
	isNull := isNullConst(args[1])
	local, localOK := constBool(args[2])
	if !ok || !(valueOK || isNull) || !localOK {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "set_config needs constant arguments").
			WithHint("Write the setting's name, value and is_local as literals, or use SET.")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	s := v.s
	if config.Known(name) {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "set_config cannot change the server setting %q", name).
			WithHint("Use SET %s = ... or ALTER SYSTEM SET.", name)
	}
	if !knownSessionParam(name) {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name).
			WithHint("SHOW ALL lists the parameters.")
	}
	if isNull {
		val = s.resetValue(name)
	}
	if name == "read_your_writes" {
		if b, ok := parseBool(val); ok {
			val = b
		}
	}
	v.effects = append(v.effects, func(context.Context) error { return s.applySetting(name, val, local) })
	return value(val), nil
}
