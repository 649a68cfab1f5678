package expr

import (
	"math"

	"streamdb/sqlerr"
	"streamdb/types"
)

// overlayCall is overlay(s, r, start[, count]) of text or bytea, which
// OVERLAY(s PLACING r FROM start [FOR count]) is (front): s with
// count characters (bytes for bytea) from position start replaced by r;
// count defaults to r's length.
func overlayCall(args []Expr) (Expr, error) {
	n := len(args)
	if n != 3 && n != 4 {
		return nil, wrongArgs("overlay", args)
	}
	t := types.Text
	if args[0].Type() == types.Bytea || args[1].Type() == types.Bytea {
		t = types.Bytea
	}
	for i, a := range args {
		at := a.Type()
		if at == types.Unknown || i < 2 && (at == t || t == types.Text && at.IsString()) || i >= 2 && (at == types.Int2 || at == types.Int4) {
			continue
		}
		return nil, wrongArgs("overlay", args)
	}
	want := []types.Type{t, t, types.Int4, types.Int4}
	a, err := castArgs(args, want[:n]...)
	if err != nil {
		return nil, err
	}
	return &Func{Name: "overlay", Args: a, T: t, Fn: strict(func(v []types.Datum) (types.Datum, error) {
		if t == types.Bytea {
			s, r := []byte(v[0].S), []byte(v[1].S)
			count := int64(len(r))
			if n == 4 {
				count = v[3].I
			}
			out, err := overlay(s, r, v[2].I, count)
			return types.NewBytes(string(out)), err
		}
		s, r := []rune(v[0].S), []rune(v[1].S)
		count := int64(len(r))
		if n == 4 {
			count = v[3].I
		}
		out, err := overlay(s, r, v[2].I, count)
		return types.NewString(string(out)), err
	})}, nil
}

// overlay is PostgreSQL's text_overlay over characters or bytes: s's
// first start-1 elements, then r, then s from position start+count on
// (from its start when that is before 1).
func overlay[E rune | byte](s, r []E, start, count int64) ([]E, error) {
	if start <= 0 {
		return nil, sqlerr.New(sqlerr.SubstringError, "negative substring length not allowed")
	}
	rest := start + count
	if rest > math.MaxInt32 || rest < math.MinInt32 {
		return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")
	}
	head := s[:min(start-1, int64(len(s)))]
	tail := s[min(max(rest-1, 0), int64(len(s))):]
	out := make([]E, 0, len(head)+len(r)+len(tail))
	return append(append(append(out, head...), r...), tail...), nil
}
