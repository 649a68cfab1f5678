package keyenc

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"runtime/debug"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"streamdb/types"
)

// fuzzDatum builds a datum of the kind picked by kind from raw bytes. ok is
// false when the bytes make no datum of that kind (too short, not a
// number).
func fuzzDatum(kind uint8, b []byte) (types.Datum, bool) {
	u64 := func(off int) uint64 {
		var buf [8]byte
		if off < len(b) {
			copy(buf[:], b[off:])
		}
		return binary.BigEndian.Uint64(buf[:])
	}
	switch kind % 9 {
	case 0:
		return types.Null, true
	case 1:
		return types.NewBool(len(b) > 0 && b[0]&1 == 1), true
	case 2:
		return types.NewInt(int64(u64(0))), true
	case 3:
		return types.NewFloat(math.Float64frombits(u64(0))), true
	case 4:
		d, _, err := apd.NewFromString(string(b))
		if err != nil {
			return types.Null, false
		}
		// 'f' text of 1E+1000000000 is a billion digits: keep the values
		// that a NUMERIC column can hold (131072 digits before the point,
		// 16383 after) well within reach.
		if d.Form == apd.Finite && (d.Exponent > 2000 || d.Exponent < -2000 || d.NumDigits() > 2000) {
			return types.Null, false
		}
		return types.NewDecimal(d), true
	case 5:
		return types.NewString(string(b)), true
	case 6:
		return types.NewDate(int64(u64(0))), true
	case 7:
		return types.NewTimestamp2000(int64(u64(0))), true
	default:
		return types.NewInterval(int32(u64(0)>>32), int32(u64(0)), int64(u64(8))), true
	}
}

// same reports whether two datums are the same value, bit for bit where
// the kind has bits (the sign of -0, a numeric's scale, NaN).
func same(a, b types.Datum) bool {
	if a.K != b.K {
		return false
	}
	switch a.K {
	case types.KindFloat:
		return math.Float64bits(a.F) == math.Float64bits(b.F) || (math.IsNaN(a.F) && math.IsNaN(b.F))
	case types.KindDecimal:
		return a.D.Text('f') == b.D.Text('f') && a.D.Negative == b.D.Negative && a.D.Form == b.D.Form
	case types.KindBool:
		return a.Bool() == b.Bool()
	}
	return a.I == b.I && a.S == b.S && a.Months == b.Months && a.Days == b.Days
}

func sign(n int) int { return cmp.Compare(n, 0) }

// FuzzKeyenc checks, for datums of one kind built from the fuzzer's bytes:
//
//   - Decode(AppendValue(d)) is d exactly, and consumes all of it;
//   - Decode(Append(d)) is a datum equal to d (keys fold -0 into 0 and
//     reduce a numeric's scale);
//   - the byte order of two keys is the value order (types.Compare), with
//     the two exceptions the encoding documents: numerics are ordered by a
//     float64 prefix only (exact order where the prefixes differ, and equal
//     numerics are equal keys), and Append orders intervals by (months,
//     days, microseconds), the identity of what prints;
//   - comparison keys (AppendCmp) order every kind by value, intervals by
//     their span as PostgreSQL compares them, and decode to an equal datum;
//   - Decode and DecodeRow of arbitrary bytes fail cleanly, never panic.
func FuzzKeyenc(f *testing.F) {
	i64 := func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
	f64 := func(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }
	iv := func(m, d int32, us int64) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(uint32(m))<<32|uint64(uint32(d))), uint64(us))
	}
	f.Add(uint8(2), i64(-1), i64(0))
	f.Add(uint8(2), i64(math.MinInt64), i64(math.MaxInt64))
	f.Add(uint8(3), f64(math.Copysign(0, -1)), f64(0))
	f.Add(uint8(3), f64(math.NaN()), f64(math.Inf(1)))
	f.Add(uint8(3), f64(math.Inf(-1)), f64(-math.MaxFloat64))
	f.Add(uint8(4), []byte("1.50"), []byte("1.5"))
	f.Add(uint8(4), []byte("-12.340"), []byte("NaN"))
	f.Add(uint8(4), []byte("1.00000000000000001"), []byte("1.00000000000000002"))
	f.Add(uint8(5), []byte("a\x00b"), []byte("a"))
	f.Add(uint8(5), []byte("a\x00"), []byte("a\x01"))
	f.Add(uint8(6), i64(-719528), i64(19000))
	f.Add(uint8(7), i64(-1), i64(1))
	f.Add(uint8(8), iv(1, 2, 3), iv(-1, 0, 0))
	f.Add(uint8(0), []byte{tagNull}, []byte{tagDecimal, 0, 0, 0, 0, 0, 0, 0, 0, '1', 0, 1})
	f.Add(uint8(1), []byte{tagString, 'x', 0}, []byte{tagInterval, 1})
	f.Fuzz(func(t *testing.T, kind uint8, a, b []byte) {
		defer watchdog(10 * time.Second)()
		// Arbitrary bytes: errors, never panics.
		Decode(a)
		DecodeRow(b, 3)

		da, okA := fuzzDatum(kind, a)
		db, okB := fuzzDatum(kind, b)
		for _, d := range []types.Datum{da, db} {
			v := AppendValue(nil, d)
			got, rest, err := Decode(v)
			if err != nil || len(rest) != 0 {
				t.Fatalf("value of %+v: decode error %v, %d bytes left", d, err, len(rest))
			}
			if !same(got, d) {
				t.Fatalf("value round trip of %+v gave %+v", d, got)
			}
			k := Append(nil, d)
			got, rest, err = Decode(k)
			if err != nil || len(rest) != 0 {
				t.Fatalf("key of %+v: decode error %v, %d bytes left", d, err, len(rest))
			}
			if got.K != d.K || types.Compare(got, d) != 0 {
				t.Fatalf("key round trip of %+v gave %+v", d, got)
			}
			got, rest, err = Decode(AppendCmp(nil, d))
			if err != nil || len(rest) != 0 || got.K != d.K || types.Compare(got, d) != 0 {
				t.Fatalf("comparison key of %+v gave %+v (%v, %d bytes left)", d, got, err, len(rest))
			}
		}
		if !okA || !okB {
			return
		}
		ka, kb := Append(nil, da), Append(nil, db)
		byBytes, byValue := bytes.Compare(ka, kb), types.Compare(da, db)
		switch da.K {
		case types.KindDecimal:
			if (byValue == 0) != (byBytes == 0) {
				t.Fatalf("numerics %s and %s: Compare %d but keys compare %d", da.D.Text('f'), db.D.Text('f'), byValue, byBytes)
			}
			if pa, pb := ka[1:9], kb[1:9]; !bytes.Equal(pa, pb) && sign(byBytes) != sign(byValue) {
				t.Fatalf("numerics %s and %s: Compare %d but keys compare %d", da.D.Text('f'), db.D.Text('f'), byValue, byBytes)
			}
		case types.KindInterval:
			want := cmp.Or(cmp.Compare(da.Months, db.Months), cmp.Compare(da.Days, db.Days), cmp.Compare(da.I, db.I))
			if sign(byBytes) != want {
				t.Fatalf("intervals %+v and %+v: component order %d but keys compare %d", da, db, want, byBytes)
			}
			byCmp := sign(bytes.Compare(AppendCmp(nil, da), AppendCmp(nil, db)))
			if pg := pgIntervalCmp(da, db); byCmp != pg || byValue != pg {
				t.Fatalf("intervals %+v and %+v: PostgreSQL compares %d, comparison keys %d, Compare %d", da, db, pg, byCmp, byValue)
			}
		default:
			if sign(byBytes) != sign(byValue) {
				t.Fatalf("%+v and %+v: Compare %d but keys compare %d", da, db, byValue, byBytes)
			}
		}
		// A prefix never breaks the order: rows compare column by column.
		ra, rb := AppendRow(nil, types.Row{da, db}), AppendRow(nil, types.Row{da, da})
		if c := bytes.Compare(ra, rb); c != sign(bytes.Compare(kb, ka)) {
			t.Fatalf("rows (%+v, %+v) and (%+v, %+v): keys compare %d", da, db, da, da, c)
		}
	})
}

// watchdog crashes the process (with every goroutine's stack) if one input
// runs longer than d, so that the fuzzer records a hang as a failing input
// instead of stalling. Call the returned function when the input is done.
func watchdog(d time.Duration) (stop func()) {
	timer := time.AfterFunc(d, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("input still running after %v", d))
	})
	return func() { timer.Stop() }
}
