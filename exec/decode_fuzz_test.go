package exec

import (
	"fmt"
	"math"
	"runtime/debug"
	"testing"
	"time"
	"unicode/utf8"

	"streamdb/types"
)

// fuzzCols is a schema with a column of every type, and of the modifiers
// VARCHAR(n) and NUMERIC(p, s).
var fuzzCols = []types.Column{
	{Name: "b", Type: types.Bool},
	{Name: "i2", Type: types.Int2},
	{Name: "i4", Type: types.Int4},
	{Name: "i8", Type: types.Int8},
	{Name: "f4", Type: types.Float4},
	{Name: "f8", Type: types.Float8},
	{Name: "n", Type: types.Numeric},
	{Name: "n52", Type: types.Numeric, Mod: types.Modifier{Precision: 5, Scale: 2}},
	{Name: "t", Type: types.Text},
	{Name: "v", Type: types.Varchar},
	{Name: "v3", Type: types.Varchar, Mod: types.Modifier{Length: 3}},
	{Name: "d", Type: types.Date},
	{Name: "ts", Type: types.Timestamp},
	{Name: "tz", Type: types.Timestamptz},
	{Name: "iv", Type: types.Interval},
	{Name: "é", Type: types.Text},
}

// fuzzNeed marks the columns a dataflow reads: the plain text columns t, v
// and é are not read, so a decoder told so (SkipUnread) only validates them.
var fuzzNeed = []bool{true, true, true, true, true, true, true, true, false, false, true, true, true, true, true, false}

// fits reports whether d is a value a column of type c may hold.
func fits(d types.Datum, c types.Column) bool {
	if d.IsNull() {
		return true
	}
	switch c.Type {
	case types.Bool:
		return d.K == types.KindBool
	case types.Int2:
		return d.K == types.KindInt && d.I >= math.MinInt16 && d.I <= math.MaxInt16
	case types.Int4:
		return d.K == types.KindInt && d.I >= math.MinInt32 && d.I <= math.MaxInt32
	case types.Int8:
		return d.K == types.KindInt
	case types.Float4, types.Float8:
		return d.K == types.KindFloat
	case types.Numeric:
		return d.K == types.KindDecimal && d.D != nil
	case types.Text, types.Varchar:
		if d.K != types.KindString || !utf8.ValidString(d.S) {
			return false
		}
		return c.Mod.Length == 0 || utf8.RuneCountInString(d.S) <= c.Mod.Length
	case types.Date:
		return d.K == types.KindDate
	case types.Timestamp, types.Timestamptz:
		return d.K == types.KindTimestamp
	case types.Interval:
		return d.K == types.KindInterval
	}
	return false
}

// FuzzDecode feeds arbitrary bytes to the JSON event decoder of a schema
// with every type, and to a table changelog decoder of the same schema.
// Neither may panic or hang. Where a message decodes:
//
//   - every value fits its column's type (kind, integer range, length);
//   - decodeInto (the source's path, rows carved from a chunk) agrees with
//     Decode, and on error appends nothing to the chunk;
//   - a decoder that skips the unread text columns accepts exactly the
//     messages the full decoder accepts (every view sees the same rows);
//   - the row, encoded again (EncodeJSON, as INSERT writes it), is accepted
//     and decodes to the same values.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{}`,
		`{"b":true,"i2":-32768,"i4":2147483647,"i8":-9223372036854775808,"f4":1.5,"f8":-0.0,"n":12345678901234567890.123456789,"n52":"1.005","t":"a\"b\\c\u00e9\ud83d\ude00\n","v":12.50,"v3":"abc","d":"2024-02-29","ts":1700000000123,"tz":"2024-01-02 03:04:05+02","iv":"1 year 2 mons -3 days 04:05:06.5","é":null}`,
		`{"f4":"NaN","f8":"-Infinity","n":"Infinity","b":"off","d":"infinity","ts":"-infinity","iv":"P1Y2M3DT4H5M6S"}`,
		`{"x":{"a":[1,{"b":null},"]}"]},"y":[[]],"z":-0.5e-3,"i8":1,"i8":2}`,
		`{"i2":32768}`,
		`{"v3":"abcd"}`,
		`{"s":"\ud800x"}`,
		"{\"t\":\"x\xffy\"}",
		`{"i4":1e2}`,
		`{"n":0E10,"n52":"-0e3","f8":1e400}`,
		`{"ts":9223372036854775807}`,
		`[{"op":"+","row":{"i8":1,"t":"x"}},{"op":"-","row":{"i8":1}}]`,
		`[{"op":"*","row":{}}]`,
		`[{"op":"+","row":{"i2":"x"}}]`,
		`{"t":`,
		`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	} {
		f.Add([]byte(s))
	}
	rows := NewRowDecoder(fuzzCols)
	skipping := NewRowDecoder(fuzzCols)
	skipping.SkipUnread(fuzzNeed)
	changelog := NewChangelogDecoder(fuzzCols)
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(10 * time.Second)()

		row, err := rows.Decode(data)
		var c Chunk
		ierr := rows.decodeInto(data, &c)
		if (ierr == nil) != (err == nil) || c.Len() != map[bool]int{true: 1, false: 0}[ierr == nil] {
			t.Fatalf("decodeInto: %v (%d rows), Decode: %v", ierr, c.Len(), err)
		}
		var sc Chunk
		if serr := skipping.decodeInto(data, &sc); (serr == nil) != (err == nil) {
			t.Fatalf("decoder skipping unread columns: %v, full decoder: %v", serr, err)
		}
		if err == nil {
			checkRow(t, row)
			if g, w := rowText(fuzzCols, c.Rows[0]), rowText(fuzzCols, row); g != w {
				t.Fatalf("decodeInto %s, Decode %s", g, w)
			}
			enc, err := EncodeJSON(fuzzCols, row)
			if err != nil {
				t.Fatalf("decoded row %s cannot be encoded again: %v", rowText(fuzzCols, row), err)
			}
			again, err := rows.Decode(enc)
			if err != nil {
				t.Fatalf("encoded row %s does not decode: %v", enc, err)
			}
			if g, w := rowText(fuzzCols, again), rowText(fuzzCols, row); g != w {
				t.Fatalf("row %s encoded as %s decodes as %s", w, enc, g)
			}
		}

		changes, cerr := changelog.Decode(data)
		var cc Chunk
		cc.Append(nil, Insert) // decodeInto appends after what is there
		ccerr := changelog.decodeInto(data, &cc)
		if (cerr == nil) != (ccerr == nil) {
			t.Fatalf("changelog decodeInto: %v, Decode: %v", ccerr, cerr)
		}
		if ccerr != nil {
			if cc.Len() != 1 {
				t.Fatalf("failed changelog decodeInto left %d changes", cc.Len()-1)
			}
			return
		}
		if cc.Len() != 1+len(changes) {
			t.Fatalf("changelog decodeInto: %d changes, Decode: %d", cc.Len()-1, len(changes))
		}
		for i, ch := range changes {
			if ch.Sign != Insert && ch.Sign != Delete {
				t.Fatalf("change %d has sign %d", i, ch.Sign)
			}
			checkRow(t, ch.Row)
			if cc.Signs[i+1] != ch.Sign || rowText(fuzzCols, cc.Rows[i+1]) != rowText(fuzzCols, ch.Row) {
				t.Fatalf("change %d: decodeInto %d %s, Decode %d %s", i, cc.Signs[i+1], rowText(fuzzCols, cc.Rows[i+1]), ch.Sign, rowText(fuzzCols, ch.Row))
			}
		}
	})
}

func checkRow(t *testing.T, row types.Row) {
	t.Helper()
	if len(row) != len(fuzzCols) {
		t.Fatalf("row of %d values for %d columns", len(row), len(fuzzCols))
	}
	for i, d := range row {
		if !fits(d, fuzzCols[i]) {
			t.Fatalf("column %s (%s): value %+v does not fit", fuzzCols[i].Name, fuzzCols[i].Type, d)
		}
	}
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
