package binder

import (
	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

// identityNextval is nextval of an identity column's sequence: it needs
// no privilege on the sequence (the table's INSERT is enough), as in
// PostgreSQL, where a serial column's nextval default does.
const identityNextval = "identity nextval"

// sequenceCall binds nextval, currval, setval or lastval (or
// identityNextval): a call of the session's sequences, made each time
// the expression is evaluated.
func (b *binder) sequenceCall(name string, args []expr.Expr) (expr.Expr, error) {
	if b.stmt == nil || b.stmt.sess == nil {
		return nil, seqFuncError(name)
	}
	s := b.stmt.sess
	want := map[string][]int{"nextval": {1}, identityNextval: {1}, "currval": {1}, "lastval": {0}, "setval": {2, 3}}[name]
	if len(args) != want[0] && (len(want) == 1 || len(args) != want[1]) {
		return nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", sequenceSignature(name, args)).
			WithHint("%s", sequenceHint[name])
	}
	if len(args) >= 2 {
		var err error
		if args[1], err = expr.Cast(args[1], types.Int8); err != nil {
			return nil, err
		}
	}
	if len(args) == 3 {
		var err error
		if args[2], err = expr.Cast(args[2], types.Bool); err != nil {
			return nil, err
		}
	}
	fnName := name
	if name == identityNextval {
		fnName = "nextval"
	}
	fn := func(a []types.Datum) (types.Datum, error) {
		for _, v := range a {
			if v.IsNull() {
				return types.Null, nil
			}
		}
		var seq any
		if len(a) > 0 {
			switch a[0].K {
			case types.KindString:
				seq = a[0].S
			case types.KindInt:
				seq = a[0].I
			}
		}
		// A sequence's value is data: a read-only transaction may read
		// the session's last value, not draw or set one (25006, as
		// PostgreSQL).
		if (name == "nextval" || name == identityNextval || name == "setval") && s.ReadOnly() {
			return types.Null, sqlerr.New(sqlerr.ReadOnlySQLTransaction, "cannot execute %s() in a read-only transaction", fnName)
		}
		var v int64
		var err error
		switch name {
		case "nextval", identityNextval:
			v, err = s.Nextval(seq, name == "nextval")
		case "currval":
			v, err = s.Currval(seq)
		case "lastval":
			v, err = s.Lastval()
		case "setval":
			v, err = s.Setval(seq, a[1].I, len(a) < 3 || a[2].Bool())
		}
		if err != nil {
			return types.Null, err
		}
		return types.NewInt(v), nil
	}
	return &expr.Func{Name: fnName, Args: args, T: types.Int8, Fn: fn}, nil
}

var sequenceHint = map[string]string{
	"nextval": "nextval takes the sequence: nextval('name').",
	"currval": "currval takes the sequence: currval('name').",
	"lastval": "lastval takes no arguments.",
	"setval":  "setval takes the sequence, the value and optionally is_called: setval('name', 42[, true]).",
}

func sequenceSignature(name string, args []expr.Expr) string {
	out := name + "("
	for i, a := range args {
		if i > 0 {
			out += ", "
		}
		out += a.Type().String()
	}
	return out + ")"
}

// sequenceFuncNames are the functions of sequences; they are bound only
// where a session runs the statement.
var sequenceFuncNames = map[string]bool{"nextval": true, "currval": true, "setval": true, "lastval": true}

func seqFuncError(name string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s() is not allowed here", name).
		WithHint("Call %s() in a query, an INSERT or a column's DEFAULT; a materialized view cannot use it.", name)
}
