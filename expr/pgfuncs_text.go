package expr

import (
	"strings"
	"time"

	"streamdb/sqlerr"
	"streamdb/types"
)

// Functions that drivers and tools call on connect or while browsing:
// replace, quote_ident, quote_literal, format (%s, %I, %L, %%), pg_typeof,
// and now() with its spellings (current_timestamp, transaction_timestamp,
// statement_timestamp, clock_timestamp). now() reads the clock when it is
// evaluated, so rows of one statement may differ by the time between them
// (PostgreSQL fixes it per transaction).
func toolFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	mk := func(t types.Type, args []Expr, fn func([]types.Datum) (types.Datum, error)) (Expr, bool, error) {
		return &Func{Name: name, Args: args, T: t, Fn: strict(fn)}, true, nil
	}
	n := len(args)
	switch name {
	case "replace":
		if n != 3 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text, types.Text, types.Text)
		if err != nil {
			return nil, true, err
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) {
			if v[1].S == "" {
				return v[0], nil
			}
			return types.NewString(strings.ReplaceAll(v[0].S, v[1].S, v[2].S)), nil
		})
	case "quote_ident", "quote_literal":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		a, err := castArgs(args, types.Text)
		if err != nil {
			return nil, true, err
		}
		q := quoteIdentText
		if name == "quote_literal" {
			q = quoteLiteralText
		}
		return mk(types.Text, a, func(v []types.Datum) (types.Datum, error) { return types.NewString(q(v[0].S)), nil })
	case "format":
		if n < 1 {
			return nil, true, wrongArgs(name, args)
		}
		a := make([]Expr, n)
		for i, x := range args {
			if a[i], err = Cast(x, types.Text); err != nil {
				return nil, true, err
			}
		}
		// Not strict: NULL arguments format as empty (%s, %I refuses) or NULL (%L).
		return &Func{Name: name, Args: a, T: types.Text, Fn: formatFunc}, true, nil
	case "pg_typeof":
		if n != 1 {
			return nil, true, wrongArgs(name, args)
		}
		t := args[0].Type().String()
		return &Func{Name: name, Args: args, T: types.Text, Fn: func([]types.Datum) (types.Datum, error) {
			return types.NewString(t), nil
		}}, true, nil
	case "now", "current_timestamp", "transaction_timestamp", "statement_timestamp", "clock_timestamp", "localtimestamp":
		if n > 1 {
			return nil, true, wrongArgs(name, args)
		}
		t := types.Timestamptz
		if name == "localtimestamp" {
			t = types.Timestamp
		}
		return &Func{Name: name, T: t, Fn: func([]types.Datum) (types.Datum, error) {
			return types.NewTime(time.Now()), nil
		}}, true, nil
	}
	return nil, false, nil
}

// quoteIdentText is quote_ident: the name as is when it needs no quotes.
func quoteIdentText(s string) string { return QuoteIdent(s) }

func quoteLiteralText(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// formatFunc is format(fmt, args...) with %s, %I, %L and %%; positions
// (%1$s) and widths are refused.
func formatFunc(v []types.Datum) (types.Datum, error) {
	if v[0].IsNull() {
		return types.Null, nil
	}
	f, next := v[0].S, 1
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "unterminated format() type specifier")
		}
		i++
		spec := f[i]
		if spec == '%' {
			b.WriteByte('%')
			continue
		}
		if spec != 's' && spec != 'I' && spec != 'L' {
			return types.Null, sqlerr.New(sqlerr.FeatureNotSupported, "format() specifier %%%c is not supported", spec).
				WithHint("Use %%s, %%I, %%L or %%%%, without positions or widths.")
		}
		if next >= len(v) {
			return types.Null, sqlerr.New(sqlerr.InvalidParameterValue, "too few arguments for format()")
		}
		arg := v[next]
		next++
		switch {
		case spec == 's':
			if !arg.IsNull() {
				b.WriteString(arg.S)
			}
		case spec == 'I':
			if arg.IsNull() {
				return types.Null, sqlerr.New(sqlerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			b.WriteString(quoteIdentText(arg.S))
		default:
			if arg.IsNull() {
				b.WriteString("NULL")
			} else {
				b.WriteString(quoteLiteralText(arg.S))
			}
		}
	}
	return types.NewString(b.String()), nil
}

// statementTimeFuncs are the functions PostgreSQL answers with the time
// its transaction started: the same value for every call in a statement
// (clock_timestamp alone reads the clock at each call).
var statementTimeFuncs = map[string]bool{"now": true, "current_timestamp": true,
	"transaction_timestamp": true, "statement_timestamp": true, "localtimestamp": true}

// HasStatementTime reports whether e calls now() or one of its synonyms.
func HasStatementTime(e Expr) bool {
	found := false
	Visit(e, func(x Expr) {
		if f, ok := x.(*Func); ok && statementTimeFuncs[f.Name] && len(f.Args) == 0 {
			found = true
		}
	})
	return found
}

// BindStatementTime returns a copy of e in which now() and its synonyms
// are the constant at, so that every call in a statement (and in its
// subqueries, bound with the same at) agrees, as in PostgreSQL.
func BindStatementTime(e Expr, at time.Time) Expr {
	if e == nil || !HasStatementTime(e) {
		return e
	}
	return Walk(Clone(e), func(x Expr) Expr {
		if f, ok := x.(*Func); ok && statementTimeFuncs[f.Name] && len(f.Args) == 0 {
			return &Const{D: types.NewTime(at), T: f.T}
		}
		return x
	})
}
