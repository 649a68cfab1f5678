package exec

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"streamdb/expr"
	"streamdb/plan"
	"streamdb/types"
)

// rawCols is a stream with a jsonb member doc that only generated
// columns read, through chains (the fast path); a jsonb member e that a
// generated column reads whole (the usual path); a jsonb member u no one
// reads (validated only); and a flat column k.
var rawCols = []types.Column{
	{Name: "doc", Type: types.JSONB},
	{Name: "e", Type: types.JSONB},
	{Name: "u", Type: types.JSONB},
	{Name: "k", Type: types.Int8},
	{Name: "a", Type: types.Text},
	{Name: "aj", Type: types.JSONB},
	{Name: "uid", Type: types.Int8},
	{Name: "tier", Type: types.Text},
	{Name: "item0", Type: types.JSONB},
	{Name: "item1x", Type: types.Text},
	{Name: "ab", Type: types.Text},
	{Name: "n", Type: types.Numeric},
	{Name: "pathidx", Type: types.Text},
	{Name: "ek", Type: types.Text},
	{Name: "deep", Type: types.Text},
	{Name: "scalar0", Type: types.JSONB},
	{Name: "userj", Type: types.JSONB},
	{Name: "mixed", Type: types.Text},
	{Name: "lazy", Type: types.Int4},
	{Name: "i2", Type: types.Int2},
}

// rawGenerated returns rawCols' generated columns.
func rawGenerated(t testing.TB) []plan.GeneratedColumn {
	col := func(i int) expr.Expr { return &expr.ColRef{Idx: i, Name: rawCols[i].Name, T: rawCols[i].Type} }
	text := func(s string) expr.Expr { return &expr.Const{D: types.NewString(s), T: types.Text} }
	integer := func(i int64) expr.Expr { return &expr.Const{D: types.NewInt(i), T: types.Int4} }
	must := func(e expr.Expr, err error) expr.Expr {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	bin := func(op string, l, r expr.Expr) expr.Expr { return must(expr.Binary(op, l, r)) }
	cast := func(e expr.Expr, ty types.Type) expr.Expr { return must(expr.Cast(e, ty)) }
	path := func(s string) expr.Expr {
		return cast(&expr.Const{D: types.NewString(s), T: types.Unknown}, types.ArrayOf(types.Text))
	}
	doc := col(0)
	gen := []expr.Expr{
		bin("->>", doc, text("a")),
		bin("->", doc, text("a")),
		cast(bin("->>", bin("->", doc, text("user")), text("id")), types.Int8),
		bin("#>>", doc, path("{user,tier}")),
		bin("->", bin("->", doc, text("items")), integer(0)),
		bin("->>", bin("->", bin("->", doc, text("items")), integer(1)), text("x")),
		bin("||", bin("->>", doc, text("a")), bin("->>", doc, text("b"))),
		cast(bin("->>", doc, text("n")), types.Numeric),
		bin("#>>", doc, path("{items,0}")),
		bin("||", bin("->>", col(1), text("k")), cast(col(1), types.Text)),
		bin("#>>", doc, path("{x,y,z}")),
		bin("->", bin("->", doc, text("a")), integer(0)),
		bin("->", doc, text("user")),
		bin("||", bin("->>", doc, text("é")), cast(col(3), types.Text)),
		// The cast is evaluated only where CASE takes its branch.
		must(expr.Case([]expr.Expr{bin("=", bin("->>", doc, text("b")), text("y"))},
			[]expr.Expr{cast(bin("->>", doc, text("a")), types.Int4)}, &expr.Const{D: types.NewInt(0), T: types.Int4})),
		cast(bin("#>>", doc, path("{user,id}")), types.Int2),
	}
	out := make([]plan.GeneratedColumn, len(gen))
	for i, g := range gen {
		out[i] = plan.GeneratedColumn{Col: 4 + i, Expr: cast(g, rawCols[4+i].Type)}
	}
	return out
}

// rawDecoders returns a decoder that takes the fast path (doc, u read by
// no operator) and one that decodes every member.
func rawDecoders(t testing.TB) (fast, slow *RowDecoder) {
	fast, slow = rawDecodersOf(rawGenerated(t))
	if fast.raw == nil || fast.raw.roots[0] == nil || fast.raw.roots[1] != nil || fast.raw.roots[2] == nil {
		t.Fatalf("fast path not set up as expected: %+v", fast.raw)
	}
	return fast, slow
}

// rawDecodersOf returns rawDecoders' decoders with the generated columns
// gen only.
func rawDecodersOf(gen []plan.GeneratedColumn) (fast, slow *RowDecoder) {
	fast, slow = NewRowDecoder(rawCols), NewRowDecoder(rawCols)
	fast.SetGenerated(gen)
	slow.SetGenerated(gen)
	need := make([]bool, len(rawCols))
	for i := 3; i < len(need); i++ {
		need[i] = true
	}
	fast.SkipUnread(need)
	return fast, slow
}

// compareRaw decodes data with both decoders and fails where the
// generated and flat columns differ, or one refuses what the other takes.
func compareRaw(t *testing.T, fast, slow *RowDecoder, data []byte) (fastPath bool) {
	t.Helper()
	want, werr := slow.Decode(data)
	got, gerr := fast.Decode(data)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("message %q: fast path error %v, usual path error %v", data, gerr, werr)
	}
	if werr != nil {
		return false
	}
	for i := 1; i < len(rawCols); i++ {
		if fast.raw.roots[i] != nil {
			continue // read by no operator (u; e where no expression reads it whole)
		}
		g, w := got[i], want[i]
		if g.IsNull() != w.IsNull() || g.K != w.K || types.FormatText(g, rawCols[i].Type) != types.FormatText(w, rawCols[i].Type) {
			t.Fatalf("message %q: column %s is %s (%v) by the fast path, %s (%v) by the usual path", data, rawCols[i].Name,
				types.FormatText(g, rawCols[i].Type), g.K, types.FormatText(w, rawCols[i].Type), w.K)
		}
	}
	return fast.raw.scanned[0]
}

// rawCases are messages for the fast path and its fallbacks, in an order
// that matters: each object's keys are guessed from the previous one's.
var rawCases = []string{
	`{}`,
	`{"doc":null}`,
	`{"doc":{"a":"x","b":"y","n":1.50,"user":{"id":7,"tier":"gold"},"items":[{"x":1},{"x":"two"}]},"e":{"k":"v"},"k":3}`,
	`{"doc":{"a":1,"a":2}}`,
	`{"doc":{"user":{"id":1,"tier":"a"},"user":{"id":2}}}`,
	`{"doc":{"user":{"id":1},"user":5}}`,
	`{"doc":{"a":"é\n\"q\"","b":null}}`,
	`{"doc":{"a":"\u00e9"}}`,
	`{"doc":{"a":"\u0000"}}`,
	`{"doc":{"a\"":1}}`,
	`{"doc":{"n":1e2}}`,
	`{"doc":{"n":-0}}`,
	`{"doc":{"n":-0.0,"a":0.10}}`,
	`{"doc":{"a":{"z":1,"b":[1, 2 ,{}]}}}`,
	`{"doc":{"a":[1,2]}}`,
	`{"doc":{"a":5}}`,
	`{"doc":{"items":[]}}`,
	`{"doc":{"items":{"0":1}}}`,
	`{"doc":[1,2]}`,
	`{"doc":"str"}`,
	`{"doc":{"user":{"id":"x"}}}`,
	`{"doc":{"user":{"id":9223372036854775808}}}`,
	`{"doc":{"x":{"y":{"z":true}}}}`,
	`{"doc":{"é":"ü"},"k":1}`,
	`{"doc":{"a":1,},"k":1}`,
	`{"doc":{"a":01}}`,
	`{"doc":{"a":1.}}`,
	`{"doc":{"a":tru}}`,
	`{"doc":{"a":1},"doc":{"a":2}}`,
	`{"doc":{"a":"x","b":"n"}}`,
	`{"doc":{"a":"x","b":"y"}}`,
	`{"doc":{"a":12,"b":"y","user":{"id":-32768}}}`,
	`{"doc":{"a":2147483648,"b":"y"}}`,
	`{"doc":{"user":{"id":32768}}}`,
	`{"doc":{"user":{"id":-0}}}`,
	`{"doc":{"user":{"id":3.0}}}`,
	`{"doc":{"user":{"id":"3"}}}`,
	`{"doc":{"a":1},"doc":{"a":"\u0000"}}`,
	`{"doc":{"a":"\u0000"},"doc":{"a":3}}`,
	`{"doc":{"a":1},"u":{"b":"\u0000"}}`,
	`{"u":[1,{"b":1e400}]}`,
	`{"doc":{"n":1e400}}`,
	"{\"doc\":{\"a\":\"x\xffy\"}}",
	"{\"doc\":{\"a\xff\":1,\"a\":2}}",
	"{\"doc\":{\"a\":2,\"z\":[\"\xc3\"]}}",
	"{\"doc\":{\"a\":\"\xc3\xa9\",\"z\":\"\xed\xa0\x80\"}}",
	"{\"doc\":{\"a\":\"\\n\xc3\"}}",
	"{\"u\":{\"a\":2,\"z\":[\"\xc3\"]}}",
	"{\"u\":{\"a\xff\":1}}",
	"{\"u\":{\"a\":\"\\t\xed\xa0\x80\"}}",
	"{\"u\":{\"\xc3\xa9\":\"\xc3\xbc\"}}",
	`{"doc":{"a":"x"}  , "k":"1"}`,
	`{"doc":{"a":` + strings.Repeat("9", 1001) + `}}`,
	`{"doc":{"a":0.` + strings.Repeat("9", 1001) + `}}`,
	`{"doc":` + strings.Repeat("[", 7000) + strings.Repeat("]", 7000) + `}`,
	// Keys guessed from the previous object's (rawPaths.object):
	// the same, then longer, shorter, escaped, reordered, repeated.
	`{"doc":{"user":{"id":1},"a":"x"}}`,
	`{"doc":{"user":{"id":2},"a":"y"}}`,
	`{"doc":{"users":{"id":3},"a":"z"}}`,
	`{"doc":{"use":{"id":4},"ab":"z"}}`,
	`{"doc":{"user\"":{"id":5},"a\"":"z"}}`,
	`{"doc":{"us\u0065r":{"id":6},"a":"w"}}`,
	`{"doc":{"a":"v","user":{"id":7}}}`,
	`{"doc":{"user":{"id":8},"user":{"tier":"t"}}}`,
	`{"doc":{"user":{"id":9},"a":"x"}}`,
	`{"doc":{"user":{"id":10,"id":11},"a":"x","a":"y"}}`,
	`{"doc":{"user":{"id":12},"a":"x","b":"y"}}`,
	`{"doc":{"user":{"id":13},"a":"x"}}`,
	`{"doc":{"user":{"id":"14"},"a":"x"}}`,
	`{"doc":{"user":{"id":15.5},"a":"x"}}`,
	`{"doc":{"user":{"id":{"v":16}},"a":"x"}}`,
	`{"doc":{"user":{"id":999999999999999999},"a":"x"}}`,
	`{"doc":{"user":{"id":1000000000000000000},"a":"x"}}`,
	`{"doc":{"user":{"id":-32769},"a":"x"}}`,
	`{"doc":{"user":{"id":-32768},"a":"2147483648"}}`,
	`{"doc":{"user":{"id":"é"},"a":"x"}}`,
	"{\"doc\":{\"user\":{\"id\":17},\"\xc3\xa9\":\"x\"}}",
	"{\"doc\":{\"user\":{\"id\":18},\"\xc3\xa9\":\"x\"}}",
	"{\"doc\":{\"user\":{\"id\":19},\"\xc3\":\"x\"}}",
	// A key that continues the guessed one is no match.
	`{"doc":{"user":{"id":20}}}`,
	`{"doc":{"userx:{"id":21}}}`,
	`{"doc":{"user":{"id":22}}}`,
	`{"doc":{"user":{"id":9223372036854775807}}}`,
	`{"doc":{"user":{"id":-9223372036854775808}}}`,
	`{"doc":{"user":{"id":-9223372036854775809}}}`,
	`{"doc":{"user":{"id":10000000000000000000}}}`,
	`{"doc":{"user":{"id":18446744073709551616}}}`,
	`{"doc":{"user":{"id":-18446744073709551617}}}`,
}

func TestRawPathsCases(t *testing.T) {
	fast, slow := rawDecoders(t)
	for _, s := range rawCases {
		compareRaw(t, fast, slow, []byte(s))
	}
	// The fast path is taken where it applies.
	if _, err := fast.Decode([]byte(`{"doc":{"a":{"b":"x"},"user":{"id":7}},"u":{"z":[1]}}`)); err != nil || !fast.raw.scanned[0] || !fast.raw.scanned[2] {
		t.Fatalf("fast path not taken: %v, scanned %v", err, fast.raw.scanned)
	}
}

// TestRawPathsRandom compares the two paths over random documents:
// nesting, duplicate keys, unicode and escapes, numbers at the edges,
// empty objects and arrays, the chains' keys most often.
func TestRawPathsRandom(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("STREAMDB_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (STREAMDB_TEST_SEED replays it)", seed)
	rng := rand.New(rand.NewSource(seed))
	fast, slow := rawDecoders(t)
	n := 20000
	if testing.Short() {
		n = 2000
	}
	covered := 0
	for range n {
		if compareRaw(t, fast, slow, []byte(randomMessage(rng))) {
			covered++
		}
	}
	// The documents must exercise the fast path, not only its fallback.
	if covered < n/20 {
		t.Fatalf("the fast path decoded doc in only %d of %d messages", covered, n)
	}
	t.Logf("the fast path decoded doc in %d of %d messages", covered, n)
}

// TestRawPathsEach compares the two paths with each generated column
// alone, so that a message one column's expression refuses (which the
// two paths then agree on) hides no other column's difference.
func TestRawPathsEach(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("STREAMDB_TEST_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (STREAMDB_TEST_SEED replays it)", seed)
	rng := rand.New(rand.NewSource(seed))
	n := 2000
	if testing.Short() {
		n = 300
	}
	for _, g := range rawGenerated(t) {
		fast, slow := rawDecodersOf([]plan.GeneratedColumn{g})
		for _, s := range rawCases {
			compareRaw(t, fast, slow, []byte(s))
		}
		for range n {
			compareRaw(t, fast, slow, []byte(randomMessage(rng)))
		}
	}
}

func randomMessage(rng *rand.Rand) string {
	var sb strings.Builder
	sb.WriteString("{")
	members := []string{"doc", "e", "u", "k", "doc"}
	for i, m := range members[:rng.Intn(len(members)+1)] {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, "%q:", m)
		if m == "k" {
			sb.WriteString(strconv.Itoa(rng.Intn(10)))
			continue
		}
		randomJSON(rng, &sb, 0)
	}
	sb.WriteString("}")
	return sb.String()
}

var rawKeys = []string{"a", "b", "n", "user", "id", "tier", "items", "x", "y", "z", "k", "é", "0", "", "a\\\"", "a\\u0041"}

var rawScalars = []string{
	`0`, `-0`, `1`, `-1`, `1.50`, `-0.0`, `0.1`, `1e2`, `1E-2`, `9223372036854775807`, `9223372036854775808`,
	`-9223372036854775809`, `123456789012345678901234567890.5`, `999999999999999999`, `-999999999999999999`,
	`1000000000000000000`, `32767`, `32768`, `-32768`, `-32769`, `2147483647`, `2147483648`, `-2147483648`,
	`-2147483649`, `7.0`, `true`, `false`, `null`, `""`, `"x"`, `"gold"`,
	`"é ü 😀"`, `"a\nb"`, `"q\"q"`, `"\\"`, `"\/"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\u0000"`, `"\ud800"`, `"12"`, `" 7 "`,
	`"1.5"`, `"-3"`, `01`, `1.`, `.5`, `tru`, `"x` + "\xff" + `"`,
}

func randomJSON(rng *rand.Rand, sb *strings.Builder, depth int) {
	ws := func() {
		if rng.Intn(6) == 0 {
			sb.WriteString([]string{" ", "\n", "\t ", "\r\n"}[rng.Intn(4)])
		}
	}
	ws()
	switch k := rng.Intn(10); {
	case depth < 4 && k < 4:
		sb.WriteString("{")
		for i := range rng.Intn(5) {
			if i > 0 {
				sb.WriteString(",")
			}
			ws()
			key := rawKeys[rng.Intn(len(rawKeys))]
			if rng.Intn(2) == 0 {
				key = rawKeys[rng.Intn(8)] // the chains' keys
			}
			fmt.Fprintf(sb, `"%s"`, key)
			ws()
			sb.WriteString(":")
			randomJSON(rng, sb, depth+1)
		}
		sb.WriteString("}")
	case depth < 4 && k < 6:
		sb.WriteString("[")
		for i := range rng.Intn(4) {
			if i > 0 {
				sb.WriteString(",")
			}
			randomJSON(rng, sb, depth+1)
		}
		sb.WriteString("]")
	case rng.Intn(4) == 0:
		sb.WriteString(rawScalars[rng.Intn(len(rawScalars))])
	default: // the scalars the fast path takes
		sb.WriteString(rawScalars[rng.Intn(38)])
	}
	ws()
}

// FuzzDecodeRawPaths checks the fast path of generated columns over jsonb
// members (rawPaths) against the usual path: the same messages accepted,
// the same values computed.
func FuzzDecodeRawPaths(f *testing.F) {
	rng := rand.New(rand.NewSource(1))
	for range 20 {
		f.Add([]byte(randomMessage(rng)))
	}
	f.Add([]byte(`{"doc":{"a":"x","b":"y","n":1.50,"user":{"id":7,"tier":"gold"},"items":[{"x":1},{"x":"two"}]},"e":{"k":"v"},"k":3}`))
	fast, slow := rawDecoders(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(10 * time.Second)()
		compareRaw(t, fast, slow, data)
	})
}

// TestRawPathsWiden: a reader shared by views (widenDecoder) reads a
// jsonb member whole once one of its views reads it.
func TestRawPathsWiden(t *testing.T) {
	fast, _ := rawDecoders(t)
	reads := NewRowDecoder(rawCols)
	reads.SetGenerated(rawGenerated(t))
	reads.SkipUnread(plan.AllColumns(len(rawCols)))
	widenDecoder(fast, reads)
	row, err := fast.Decode([]byte(`{"doc":{"a":{"z":1}}}`))
	if err != nil || fast.raw != nil && fast.raw.scanned[0] || row[0].S != `{"a": {"z": 1}}` || row[4].S != `{"z": 1}` {
		t.Fatalf("widened decoder: %v, doc %q, a %q", err, row[0].S, row[4].S)
	}
}
