package expr

import (
	bin "encoding/binary"
	"errors"
	"math"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// OrderedArgFunc packs the sort keys and the value of an aggregate that
// orders its input by other expressions than its value
// (string_agg(a, ',' ORDER BY b DESC NULLS LAST)) into one bytea datum,
// the aggregate's argument: its accumulator unpacks each row
// (UnpackOrderedArg) to sort by the keys. Every datum is kept exactly,
// NULL included, so equal rows pack alike and a retraction finds the row
// it retracts.
const OrderedArgFunc = "streamdb_ordered_arg"

func orderedArg(args []Expr) (Expr, error) {
	if len(args) < 2 {
		return nil, wrongArgs(OrderedArgFunc, args)
	}
	return &Func{Name: OrderedArgFunc, Args: args, T: types.Bytea, Fn: func(a []types.Datum) (types.Datum, error) {
		return types.Datum{K: types.KindBytes, S: string(packDatums(nil, a))}, nil
	}}, nil
}

func packDatums(buf []byte, ds []types.Datum) []byte {
	for _, d := range ds {
		buf = append(buf, byte(d.K))
		buf = bin.AppendVarint(buf, int64(d.Months))
		buf = bin.AppendVarint(buf, int64(d.Days))
		buf = bin.AppendVarint(buf, d.I)
		buf = bin.AppendUvarint(buf, math.Float64bits(d.F))
		buf = bin.AppendUvarint(buf, uint64(len(d.S)))
		buf = append(buf, d.S...)
		dec := ""
		if d.D != nil {
			dec = d.D.String()
		}
		buf = bin.AppendUvarint(buf, uint64(len(dec)))
		buf = append(buf, dec...)
	}
	return buf
}

var errOrderedArg = errors.New("malformed ordered aggregate argument")

// UnpackOrderedArg reads the datums an OrderedArgFunc call packed.
func UnpackOrderedArg(b []byte) ([]types.Datum, error) {
	var out []types.Datum
	varint := func() int64 {
		v, n := bin.Varint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	uvarint := func() uint64 {
		v, n := bin.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	bytes := func() (string, bool) {
		n := uvarint()
		if b == nil || n > uint64(len(b)) {
			return "", false
		}
		s := string(b[:n])
		b = b[n:]
		return s, true
	}
	for len(b) > 0 {
		d := types.Datum{K: types.Kind(b[0])}
		b = b[1:]
		d.Months, d.Days = int32(varint()), int32(varint())
		d.I = varint()
		d.F = math.Float64frombits(uvarint())
		s, ok := bytes()
		if !ok {
			return nil, errOrderedArg
		}
		d.S = s
		dec, ok := bytes()
		if !ok {
			return nil, errOrderedArg
		}
		if dec != "" {
			v, _, err := apd.NewFromString(dec)
			if err != nil {
				return nil, errOrderedArg
			}
			d.D = v
		}
		out = append(out, d)
	}
	return out, nil
}
