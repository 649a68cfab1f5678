package exec

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"streamdb/expr"
	"streamdb/sqlerr"
	"streamdb/types"
)

var decodeCols = []types.Column{
	{Name: "i", Type: types.Int8},
	{Name: "s", Type: types.Text},
	{Name: "n", Type: types.Numeric},
	{Name: "f", Type: types.Float8},
	{Name: "b", Type: types.Bool},
	{Name: "ts", Type: types.Timestamp},
	{Name: "i2", Type: types.Int2},
	{Name: "v", Type: types.Varchar, Mod: types.Modifier{Length: 3}},
	{Name: "d", Type: types.Date},
}

func rowText(cols []types.Column, r types.Row) string {
	parts := make([]string, len(r))
	for i, d := range r {
		if d.IsNull() {
			parts[i] = "NULL"
		} else {
			parts[i] = types.FormatText(d, cols[i].Type)
		}
	}
	return strings.Join(parts, "|")
}

func TestRowDecoderCases(t *testing.T) {
	ok := []struct{ in, want string }{
		{`{}`, "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{` {"i": 42 , "s":"x"} `, "42|x|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"n":12345678901234567890.123456789}`, "NULL|NULL|12345678901234567890.123456789|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"n":"1.50"}`, "NULL|NULL|1.50|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"f":1e3,"i":-9223372036854775808}`, "-9223372036854775808|NULL|NULL|1000|NULL|NULL|NULL|NULL|NULL"},
		{`{"b":true,"s":false}`, "NULL|false|NULL|NULL|t|NULL|NULL|NULL|NULL"},
		{`{"b":"off"}`, "NULL|NULL|NULL|NULL|f|NULL|NULL|NULL|NULL"},
		{`{"ts":1700000000123}`, "NULL|NULL|NULL|NULL|NULL|2023-11-14 22:13:20.123|NULL|NULL|NULL"},
		{`{"ts":"2024-01-02 03:04:05"}`, "NULL|NULL|NULL|NULL|NULL|2024-01-02 03:04:05|NULL|NULL|NULL"},
		{`{"s":12.50}`, "NULL|12.50|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"s":"a\"b\\c\u00e9\ud83d\ude00\n"}`, "NULL|a\"b\\cé😀\n|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"\u0069":7}`, "7|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"i":null,"s":null}`, "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"x":{"a":[1,{"b":null},"]}"]},"y":[[]],"z":-0.5e-3,"i":1}`, "1|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"i":1,"i":2}`, "2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"i":"x","i":3}`, "3|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL"},
		{`{"v":"ab   "}`, "NULL|NULL|NULL|NULL|NULL|NULL|NULL|ab |NULL"},
		{`{"d":"2024-02-29"}`, "NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|2024-02-29"},
	}
	d := NewRowDecoder(decodeCols)
	for _, c := range ok {
		row, err := d.Decode([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got := rowText(decodeCols, row); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	bad := []string{
		``, `null`, `[]`, `"x"`, `1`, `{`, `{"i"`, `{"i":}`, `{"i":1,}`, `{,}`, `{"i":1}x`, `{"i":1}{}`,
		`{"i":01}`, `{"i":1.}`, `{"i":-}`, `{"i":+1}`, `{"f":.5}`, `{"f":1e}`, `{"f":NaN}`,
		`{"b":tru}`, `{"s":"\x"}`, "{\"s\":\"a\tb\"}", `{"s":"\u12"}`, `{'i':1}`, `{"x":[1,}`, `{"x":{"a"}}`,
		`{"i":1.5}`, `{"i":"abc"}`, `{"i2":40000}`, `{"i":99999999999999999999}`, `{"b":1}`, `{"i":true}`,
		`{"ts":1.5}`, `{"ts":"yesterday-ish"}`, `{"d":5}`, `{"i":{}}`, `{"s":[]}`, `{"v":"abcd"}`,
		`{"f":1e400}`, `{"x":` + strings.Repeat("[", maxJSONDepth+2) + strings.Repeat("]", maxJSONDepth+2) + `}`,
	}
	for _, in := range bad {
		if row, err := d.Decode([]byte(in)); err == nil {
			t.Errorf("%q: decoded as %s, want an error", in, rowText(decodeCols, row))
		}
	}
	// Text PostgreSQL refuses is refused with its SQLSTATE, never
	// replaced by U+FFFD; also in a column the dataflow does not read.
	notText := []struct{ in, code string }{
		{"{\"s\":\"x\xffy\"}", "22021"},
		{"{\"s\":\"\xe2\x28\xa1\"}", "22021"},
		{"{\"s\":\"\xed\xa0\x80\"}", "22021"}, // a surrogate in UTF-8
		{`{"s":"a\u0000"}`, "22P05"},
		{`{"s":"\ud800x"}`, "22P02"},
		{`{"s":"\udc00"}`, "22P02"},
		{`{"s":"\ud800\ud800"}`, "22P02"},
		{`{"ts":"\u0000"}`, "22P05"},
		// Anywhere in the message, as PostgreSQL's jsonb input refuses it.
		{"{\"\xff\":1,\"s\":\"x\"}", "22021"},
		{"{\"other\":\"\xff\",\"i\":1}", "22021"},
		{"{\"other\":{\"a\":[\"\xc3\"]},\"i\":1}", "22021"},
		{`{"other":"\udc00","i":1}`, "22P02"},
		{`{"\ud800":1}`, "22P02"},
		{`{"other":"\u0000","i":1}`, "22P05"},
		{`{"x\u0000":1,"i":1}`, "22P05"},
	}
	unread := NewRowDecoder(decodeCols)
	unread.SkipUnread(make([]bool, len(decodeCols)))
	for _, dec := range []*RowDecoder{d, unread} {
		for _, c := range notText {
			row, err := dec.Decode([]byte(c.in))
			if err == nil {
				t.Errorf("%q: decoded as %s, want %s", c.in, rowText(decodeCols, row), c.code)
			} else if got := sqlerr.Code(err); got != c.code {
				t.Errorf("%q: %v: SQLSTATE %q, want %s", c.in, err, got, c.code)
			}
		}
	}
	// A table's changelog reads \u0000 (written before NUL was refused).
	if row, err := NewChangelogDecoder(decodeCols).rows.Decode([]byte(`{"s":"a\u0000"}`)); err != nil || row[1].S != "a\x00" {
		t.Errorf("changelog decoder: %v, %v", row, err)
	}
}

// oldDecode is the decoder this one replaced (goccy/go-json into
// map[string]any), kept as the oracle: the new decoder must agree with it on
// every well-formed message.
func oldDecode(cols []types.Column, data []byte) (types.Row, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	row := make(types.Row, len(cols))
	for name, v := range m {
		i := -1
		for j, c := range cols {
			if c.Name == name {
				i = j
			}
		}
		if i < 0 {
			continue
		}
		t := cols[i].Type
		var val types.Datum
		var err error
		switch x := v.(type) {
		case nil:
		case bool:
			switch {
			case t == types.Bool:
				val = types.NewBool(x)
			case t.IsString():
				val = types.NewString(strconv.FormatBool(x))
			default:
				err = fmt.Errorf("bool")
			}
		case json.Number:
			switch {
			case t.IsTime():
				ms, perr := x.Int64()
				err = perr
				if perr == nil {
					// Epoch milliseconds past the range never wrap.
					val, err = types.FromTime(time.UnixMilli(ms))
				}
			case t.IsString():
				val = types.NewString(x.String())
			case t.IsNumeric():
				val, err = types.ParseText(x.String(), t)
			default:
				err = fmt.Errorf("number")
			}
		case string:
			val, err = types.ParseText(x, t)
		default:
			err = fmt.Errorf("compound")
		}
		if err == nil {
			val, err = expr.ApplyModifier(val, cols[i].Mod, false)
		}
		if err != nil {
			return nil, err
		}
		row[i] = val
	}
	return row, nil
}

// randJSONValue returns a random JSON value, sometimes nested.
func randJSONValue(rng *rand.Rand, depth int) string {
	switch rng.Intn(12) {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[rng.Intn(2)]
	case 2:
		return strconv.FormatInt(rng.Int63()-rng.Int63(), 10)
	case 3:
		return strconv.Itoa(rng.Intn(200) - 100)
	case 4:
		return []string{"1.5", "-0", "0.000001", "1e3", "2E-2", "123456789012345678901234567890", "-0.0", "1.25e+2", "99999"}[rng.Intn(9)]
	case 5:
		return strconv.Quote([]string{"abc", "12", "-7.25", "t", "no", "2024-03-04 05:06:07", "2024-03-04", "1 day", ""}[rng.Intn(9)])
	case 6:
		return `"a\"b\\c\/\u00e9\u4e2d\ud83d\ude00\t"`
	case 7, 8:
		if depth < 3 {
			n := rng.Intn(3)
			parts := make([]string, n)
			for i := range parts {
				parts[i] = randJSONValue(rng, depth+1)
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		return "[]"
	case 9:
		if depth < 3 {
			return `{"a":` + randJSONValue(rng, depth+1) + `, "i" : 1}`
		}
		return "{}"
	default:
		return strconv.Itoa(rng.Intn(30000))
	}
}

func randMessage(rng *rand.Rand) []byte {
	names := []string{"i", "s", "n", "f", "b", "ts", "i2", "v", "d", "other", "I", "x"}
	n := rng.Intn(6)
	var sb strings.Builder
	sb.WriteString("{")
	for j := 0; j < n; j++ {
		if j > 0 {
			sb.WriteString([]string{",", " ,\n"}[rng.Intn(2)])
		}
		sb.WriteString(strconv.Quote(names[rng.Intn(len(names))]))
		sb.WriteString(":")
		sb.WriteString(randJSONValue(rng, 0))
	}
	sb.WriteString("}")
	b := []byte(sb.String())
	switch rng.Intn(8) {
	case 0: // truncate
		b = b[:rng.Intn(len(b))]
	case 1: // overwrite one byte
		b[rng.Intn(len(b))] = "{}[]\",:0-e. \\tnu"[rng.Intn(16)]
	}
	return b
}

// textRefused reports whether err is the decoder's refusal of text
// PostgreSQL's jsonb refuses (decode_text.go).
func textRefused(err error) bool {
	switch sqlerr.Code(err) {
	case "22021", "22P05":
		return true
	case "22P02":
		return strings.Contains(err.Error(), "surrogate")
	}
	return false
}

// TestRowDecoderMatchesOld compares the decoder with the map-based one it
// replaced on random messages, well-formed and broken. Where the old one
// accepted trailing content after the object (it read only the first JSON
// value), the new one must refuse.
func TestRowDecoderMatchesOld(t *testing.T) {
	seed := int64(20261129)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	d := NewRowDecoder(decodeCols)
	var c Chunk
	agree := 0
	for iter := 0; iter < 50000; iter++ {
		msg := randMessage(rng)
		want, werr := oldDecode(decodeCols, msg)
		if werr == nil && !stdjson.Valid(msg) {
			werr = fmt.Errorf("trailing content")
		}
		got, gerr := d.Decode(msg)
		// decodeInto must agree with Decode and append nothing on error.
		before := c.Len()
		ierr := d.decodeInto(msg, &c)
		if (ierr == nil) != (gerr == nil) || (ierr != nil && c.Len() != before) || (ierr == nil && c.Len() != before+1) {
			t.Fatalf("%q: decodeInto err %v, Decode err %v, chunk %d -> %d", msg, ierr, gerr, before, c.Len())
		}
		if werr == nil && gerr != nil && textRefused(gerr) {
			continue // the old one put U+FFFD or NUL into text
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: old err %v, new err %v", msg, werr, gerr)
		}
		if werr != nil {
			continue
		}
		if w, g := rowText(decodeCols, want), rowText(decodeCols, got); w != g {
			t.Fatalf("%q:\n old %s\n new %s", msg, w, g)
		}
		if g := rowText(decodeCols, c.Rows[c.Len()-1]); g != rowText(decodeCols, got) {
			t.Fatalf("%q: decodeInto %s, Decode %s", msg, g, rowText(decodeCols, got))
		}
		agree++
		if c.Len() > 5000 {
			c = Chunk{}
		}
	}
	t.Logf("%d well-formed messages decoded alike", agree)
	if agree < 5000 {
		t.Fatalf("only %d decodable messages: the generator is broken", agree)
	}
}

// TestChunkRowsIndependent checks that rows carved from one slab do not
// share datums and that a failed decode leaves earlier rows intact.
func TestChunkRowsIndependent(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Text}}
	d := NewRowDecoder(cols)
	var c Chunk
	for i := 0; i < 3*defaultSlabRows; i++ {
		if err := d.decodeInto([]byte(fmt.Sprintf(`{"k":%d,"v":"x%d"}`, i, i)), &c); err != nil {
			t.Fatal(err)
		}
		if err := d.decodeInto([]byte(`{"k":1,"v":`), &c); err == nil {
			t.Fatal("truncated message decoded")
		}
	}
	for i, r := range c.Rows {
		if len(r) != 2 || cap(r) != 2 || r[0].I != int64(i) || r[1].S != fmt.Sprintf("x%d", i) {
			t.Fatalf("row %d = %v (cap %d)", i, r, cap(r))
		}
	}
}

func TestChangelogDecodeInto(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}}
	d := NewChangelogDecoder(cols)
	var c Chunk
	if err := d.decodeInto([]byte(`[{"op":"-","row":{"k":1}},{"op":"+","row":{"k":2}}]`), &c); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`[{"op":"+","row":{"k":3}},{"op":"*","row":{"k":1}}]`, `[{"op":"+","row":{"k":3}},{"op":"+","row":{"k":"x"}}]`, `{}`} {
		if err := d.decodeInto([]byte(bad), &c); err == nil {
			t.Fatalf("%s decoded", bad)
		}
	}
	if c.Len() != 2 || c.Signs[0] != Delete || c.Rows[0][0].I != 1 || c.Signs[1] != Insert || c.Rows[1][0].I != 2 {
		t.Fatalf("chunk %v %v", c.Rows, c.Signs)
	}
}

func BenchmarkRowDecoder(b *testing.B) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "v", Type: types.Int8}, {Name: "ts", Type: types.Timestamp}}
	msg := []byte(`{"k":12345,"v":42,"ts":1700000000123,"note":"padding padding padding padding padding padding padding"}`)
	b.Run("new", func(b *testing.B) { benchDecodeInto(b, NewRowDecoder(cols), msg) })
	b.Run("old", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := oldDecode(cols, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkDecodeBid decodes a Nexmark bid (~210 bytes) with every column
// read, and as the GROUP BY auction benchmark reads it (auction and price;
// the text columns unread).
func BenchmarkDecodeBid(b *testing.B) {
	cols := []types.Column{{Name: "auction", Type: types.Int8}, {Name: "bidder", Type: types.Int8}, {Name: "price", Type: types.Int8},
		{Name: "channel", Type: types.Varchar}, {Name: "url", Type: types.Varchar}, {Name: "date_time", Type: types.Timestamp}, {Name: "extra", Type: types.Varchar}}
	msg := []byte(`{"auction":1000,"bidder":1000,"price":16529655,"channel":"Facebook","url":"https://www.nexmark.com/ldxqy/item.htm?query=1","date_time":1767225600000,"extra":"cmcurgseasrlcmcurgseasrlcmcurgseasrlcmcurgseasrlcmcurgseasrlcmcurgseasrl"}`)
	for _, tc := range []struct {
		name string
		need []bool
	}{
		{"all", nil},
		{"auction-price", []bool{true, false, true, false, false, false, false}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := NewRowDecoder(cols)
			if tc.need != nil {
				d.SkipUnread(tc.need)
			}
			b.SetBytes(int64(len(msg)))
			benchDecodeInto(b, d, msg)
		})
	}
}

// benchDecodeInto decodes msg b.N times into chunks of chunkRows rows.
func benchDecodeInto(b *testing.B, d *RowDecoder, msg []byte) {
	c := &Chunk{}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if c.Len() == chunkRows {
			c = &Chunk{}
		}
		if err := d.decodeInto(msg, c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRowDecoderNoColumn checks the count of decoded objects none of
// whose members names a column: they decode to rows of NULLs, the sign of
// columns declared under other names than the producer's fields.
func TestRowDecoderNoColumn(t *testing.T) {
	d := NewRowDecoder(decodeCols)
	for _, c := range []struct {
		msg  string
		want uint64
	}{
		{`{"i": 1, "other": 2}`, 0},
		{`{"I": 1, "S": "x"}`, 1}, // names are matched exactly
		{`{}`, 2},
		{`{"s": null}`, 2},        // a null value still names a column
		{`not json`, 2},           // an error is not counted here
		{`{"x": 1, "i": "a"}`, 2}, // nor a value that fails its column
		{`{"i": 1}`, 2},
		{`{"customerId": 7}`, 3},
	} {
		d.Decode([]byte(c.msg))
		if got := d.NoColumn(); got != c.want {
			t.Fatalf("after %s: NoColumn() = %d, want %d", c.msg, got, c.want)
		}
	}
}
