package plan

import (
	"encoding/hex"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/expr"
	"streamdb/types"
)

// exprRec is one expression of a plan record: a column reference (Col),
// a constant (Const) or a call (Fn over Args), with its type.
type exprRec struct {
	Col   *int            `json:"col,omitempty"`
	Name  string          `json:"name,omitempty"` // a column reference's
	Const *datumRec       `json:"const,omitempty"`
	Fn    string          `json:"fn,omitempty"`
	Infix bool            `json:"infix,omitempty"`
	Args  []*exprRec      `json:"args,omitempty"`
	Type  string          `json:"type"`
	Mod   *types.Modifier `json:"mod,omitempty"`
}

// datumRec is a value, exactly: a float by its bits, a decimal by its
// digits, so that a constant reads back equal.
type datumRec struct {
	Kind   string `json:"kind"`
	I      int64  `json:"i,omitempty"`
	F      uint64 `json:"f,omitempty"` // math.Float64bits
	S      string `json:"s,omitempty"`
	D      string `json:"d,omitempty"`
	Months int32  `json:"months,omitempty"`
	Days   int32  `json:"days,omitempty"`
}

// kindNames names the datum kinds in records (their numbers are not
// part of the format).
var kindNames = map[types.Kind]string{
	types.KindNull: "null", types.KindBool: "bool", types.KindInt: "int", types.KindFloat: "float",
	types.KindDecimal: "decimal", types.KindString: "string", types.KindBytes: "bytes", types.KindDate: "date",
	types.KindTimestamp: "timestamp", types.KindInterval: "interval", types.KindTime: "time", types.KindTimeTZ: "timetz",
	types.KindUUID: "uuid",
	types.KindJSON: "json", types.KindJSONB: "jsonb",
}

func encodeExpr(e expr.Expr) (*exprRec, error) {
	switch e := e.(type) {
	case *expr.ColRef:
		idx := e.Idx
		return &exprRec{Col: &idx, Name: e.Name, Type: e.T.String()}, nil
	case *expr.Const:
		d, err := encodeDatum(e.D)
		if err != nil {
			return nil, err
		}
		return &exprRec{Const: d, Type: e.T.String(), Mod: modRec(e.Mod)}, nil
	case *expr.Func:
		r := &exprRec{Fn: e.Name, Infix: e.Infix, Type: e.T.String(), Mod: modRec(e.Mod), Args: make([]*exprRec, len(e.Args))}
		for i, a := range e.Args {
			var err error
			if r.Args[i], err = encodeExpr(a); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	return nil, fmt.Errorf("expression %s cannot be recorded", e)
}

func encodeDatum(d types.Datum) (*datumRec, error) {
	k, ok := kindNames[d.K]
	if !ok {
		return nil, fmt.Errorf("a value of kind %d cannot be recorded", d.K)
	}
	r := &datumRec{Kind: k, I: d.I, S: d.S, Months: d.Months, Days: d.Days}
	if d.K == types.KindTimestamp {
		// Microseconds since 1970, as timestamps were recorded before
		// datums counted from 2000; the datum's own where that form ends.
		if unix, ok := types.UnixMicros(d.I); ok {
			r.I = unix
		} else {
			r.Kind = kindTimestamp2000
		}
	}
	if d.K == types.KindBytes || d.K == types.KindUUID {
		r.S = hex.EncodeToString([]byte(d.S)) // raw bytes are not JSON text
	}
	if d.F != 0 || math.Signbit(d.F) {
		r.F = math.Float64bits(d.F)
	}
	if d.D != nil {
		r.D = d.D.String()
	}
	return r, nil
}

func decodeExpr(r *exprRec) (expr.Expr, error) {
	t, err := typeByName(r.Type)
	if err != nil {
		return nil, err
	}
	var mod types.Modifier
	if r.Mod != nil {
		mod = *r.Mod
	}
	switch {
	case r.Col != nil:
		return &expr.ColRef{Idx: *r.Col, Name: r.Name, T: t}, nil
	case r.Const != nil:
		d, err := decodeDatum(r.Const)
		if err != nil {
			return nil, err
		}
		return &expr.Const{D: d, T: t, Mod: mod}, nil
	case r.Fn != "":
		args := make([]expr.Expr, len(r.Args))
		for i, a := range r.Args {
			if args[i], err = decodeExpr(a); err != nil {
				return nil, err
			}
		}
		e, err := expr.Rebuild(r.Fn, r.Infix, args, t, mod)
		if err != nil {
			return nil, fmt.Errorf("plan record: %w", err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("plan record: an expression that is neither a column, a constant nor a call")
}

// kindTimestamp2000 is a timestamp recorded as a datum's microseconds
// (since 2000-01-01): one past the years that "timestamp", microseconds
// since 1970, holds.
const kindTimestamp2000 = "timestamp2000"

func decodeDatum(r *datumRec) (types.Datum, error) {
	switch r.Kind {
	case kindTimestamp2000:
		if !types.ValidTimestamp(r.I) {
			return types.Null, fmt.Errorf("plan record: timestamp %d out of range", r.I)
		}
		return types.NewTimestamp2000(r.I), nil
	case kindNames[types.KindTimestamp]:
		us, ok := types.FromUnixMicros(r.I)
		if !ok {
			return types.Null, fmt.Errorf("plan record: timestamp %d out of range", r.I)
		}
		return types.NewTimestamp2000(us), nil
	}
	var k types.Kind
	found := false
	for kind, name := range kindNames {
		if name == r.Kind {
			k, found = kind, true
		}
	}
	if !found {
		return types.Null, fmt.Errorf("plan record: unknown value kind %q", r.Kind)
	}
	d := types.Datum{K: k, I: r.I, S: r.S, Months: r.Months, Days: r.Days, F: math.Float64frombits(r.F)}
	if k == types.KindBytes || k == types.KindUUID {
		b, err := hex.DecodeString(r.S)
		if err != nil {
			return types.Null, fmt.Errorf("plan record: bytes %q: %w", r.S, err)
		}
		if k == types.KindUUID && len(b) != types.UUIDLen {
			return types.Null, fmt.Errorf("plan record: uuid %q is not %d bytes", r.S, types.UUIDLen)
		}
		d.S = string(b)
	}
	if r.D != "" {
		dec, _, err := apd.NewFromString(r.D)
		if err != nil {
			return types.Null, fmt.Errorf("plan record: decimal %q: %w", r.D, err)
		}
		d.D = dec
	}
	return d, nil
}
