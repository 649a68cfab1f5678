package differential

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// event is one generated row of the events stream/table. A nil field is
// SQL NULL.
type event struct {
	id     *int64
	userID *int64
	kind   *string
	amount *int32
	price  *float64
	qty    *int16
	tag    *string
	ok     *bool
	ts     *time.Time

	tsFormat int // how ts is written in JSON: 0 text, 1 RFC 3339, 2 epoch ms
	nullMode int // bit i set: write NULL column i as an explicit JSON null
}

// columns lists the schema shared by streamdb and PostgreSQL.
var columns = []struct{ name, typ string }{
	{"id", "BIGINT"},
	{"user_id", "BIGINT"},
	{"kind", "VARCHAR"},
	{"amount", "INT"},
	{"price", "DOUBLE PRECISION"},
	{"qty", "SMALLINT"},
	{"tag", "VARCHAR"},
	{"ok", "BOOLEAN"},
	{"ts", "TIMESTAMP"},
}

func columnNames() []string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.name
	}
	return names
}

func columnDefs() string {
	defs := make([]string, len(columns))
	for i, c := range columns {
		defs[i] = c.name + " " + c.typ
	}
	return strings.Join(defs, ", ")
}

// baseTime is the start of the generated time range (UTC, as TIMESTAMP).
var baseTime = time.Date(2026, 3, 14, 8, 0, 0, 0, time.UTC)

// Weighted pools of values. Strings include spaces, quotes, backslashes,
// LIKE metacharacters and non-ASCII text; the empty string is a value too.
var kinds = weighted{
	{"click", 30}, {"view", 25}, {"buy", 10}, {"refund", 5}, {"Click", 2},
	{" spaced kind ", 2}, {"o'brien", 2}, {"naïve café", 2}, {"日本語", 1},
	{"", 1}, {`say "hi"`, 1}, {`back\slash`, 1}, {"ÉCOLE", 1}, {"100%", 1},
}

var tags = weighted{
	{"a", 20}, {"b", 12}, {"alpha beta", 8}, {"ab", 6}, {"promo", 6},
	{"it's", 4}, {"Ünïcødé", 3}, {"😀 smile", 2}, {"  lead", 2}, {"trail  ", 2},
	{"under_score", 2}, {"per%cent", 2}, {"Жук", 2}, {"", 1}, {"a\tb", 1},
	{"quote\"d", 1}, {"x y z", 1},
}

// tagRunes is the alphabet of random tags.
var tagRunes = []rune("abcxyzABZ019 _%'\"\\éÉЖж日😀-")

type weighted []struct {
	v string
	w int
}

func (ws weighted) pick(r *rand.Rand) string {
	total := 0
	for _, x := range ws {
		total += x.w
	}
	n := r.IntN(total)
	for _, x := range ws {
		if n < x.w {
			return x.v
		}
		n -= x.w
	}
	panic("unreachable")
}

func ptr[T any](v T) *T { return &v }

// generator produces a deterministic sequence of events from a seed.
type generator struct {
	r    *rand.Rand
	zipf *rand.Zipf
	next int64
}

func newGenerator(seed uint64) *generator {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &generator{r: r, zipf: rand.NewZipf(r, 1.2, 2, 400)}
}

// null reports whether a nullable column should be NULL (~5%).
func (g *generator) null() bool { return g.r.IntN(100) < 5 }

func (g *generator) event() event {
	r := g.r
	g.next++
	var e event
	e.nullMode = r.IntN(1 << len(columns))

	if !g.null() {
		id := g.next
		switch n := r.IntN(100); {
		case n < 2:
			// Large ids make sum(id) leave the int64 range (numeric result).
			id = 4_000_000_000_000_000_000 + g.next
		case n < 4:
			id = -g.next
		}
		e.id = &id
	}
	if !g.null() {
		u := int64(g.zipf.Uint64()) - 25 // skewed, some negative
		e.userID = &u
	}
	if !g.null() {
		e.kind = ptr(kinds.pick(r))
	}
	if !g.null() {
		var a int32
		switch n := r.IntN(100); {
		case n < 70:
			a = int32(r.IntN(1201) - 200)
		case n < 93:
			a = int32(r.IntN(100001) - 50000)
		case n < 96:
			a = 0
		default:
			a = 2_000_000_000 - int32(r.IntN(1000))
			if r.IntN(2) == 0 {
				a = -a
			}
		}
		e.amount = &a
	}
	if !g.null() {
		var p float64
		switch n := r.IntN(100); {
		case n < 55:
			p = math.Round((r.Float64()*520-20)*100) / 100 // cents, some negative
		case n < 75:
			p = r.Float64() * 1000 // full binary fractions
		case n < 88:
			p = float64(r.IntN(200)-10) + 0.5*float64(r.IntN(2)) // halves: rounding ties
		case n < 92:
			p = float64(r.IntN(10)) * 1e-7
		case n < 95:
			p = 12345678.9 + float64(r.IntN(1000))
		default:
			p = float64(r.IntN(50))
		}
		e.price = &p
	}
	if !g.null() {
		var q int16
		switch n := r.IntN(100); {
		case n < 80:
			q = int16(r.IntN(21))
		case n < 92:
			q = -int16(r.IntN(5) + 1)
		default:
			q = int16(100 + r.IntN(32000))
		}
		e.qty = &q
	}
	if !g.null() {
		if r.IntN(100) < 20 {
			n := r.IntN(13)
			rs := make([]rune, n)
			for i := range rs {
				rs[i] = tagRunes[r.IntN(len(tagRunes))]
			}
			e.tag = ptr(string(rs))
		} else {
			e.tag = ptr(tags.pick(r))
		}
	}
	if !g.null() {
		e.ok = ptr(r.IntN(100) < 62)
	}
	if !g.null() {
		// Three hours with microseconds; earlier events are a little more
		// frequent so that minute buckets differ in size.
		span := int64(3 * time.Hour / time.Microsecond)
		off := int64(math.Pow(r.Float64(), 1.3) * float64(span))
		ts := baseTime.Add(time.Duration(off) * time.Microsecond)
		switch n := r.IntN(100); {
		case n < 50:
			e.tsFormat = 0
		case n < 80:
			e.tsFormat = 1
		default:
			e.tsFormat = 2
			ts = ts.Truncate(time.Millisecond)
		}
		if r.IntN(10) == 0 {
			ts = ts.Truncate(time.Second)
		}
		e.ts = &ts
	}
	return e
}

// values returns the row for PostgreSQL's COPY, in column order.
func (e *event) values() []any {
	vals := make([]any, 0, len(columns))
	add := func(isNil bool, v any) {
		if isNil {
			vals = append(vals, nil)
		} else {
			vals = append(vals, v)
		}
	}
	add(e.id == nil, deref(e.id))
	add(e.userID == nil, deref(e.userID))
	add(e.kind == nil, deref(e.kind))
	add(e.amount == nil, deref(e.amount))
	add(e.price == nil, deref(e.price))
	add(e.qty == nil, deref(e.qty))
	add(e.tag == nil, deref(e.tag))
	add(e.ok == nil, deref(e.ok))
	add(e.ts == nil, deref(e.ts))
	return vals
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// json renders the event as the message published to NATS. NULL columns
// are either missing or an explicit null; timestamps come in the three
// formats the README documents.
func (e *event) json() []byte {
	var b strings.Builder
	b.WriteByte('{')
	first := true
	field := func(i int, name string, isNil bool, val func() any) {
		if isNil && e.nullMode&(1<<i) == 0 {
			return // missing field = NULL
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(`"` + name + `":`)
		if isNil {
			b.WriteString("null")
			return
		}
		v, err := json.Marshal(val())
		if err != nil {
			panic(err)
		}
		b.Write(v)
	}
	field(0, "id", e.id == nil, func() any { return *e.id })
	field(1, "user_id", e.userID == nil, func() any { return *e.userID })
	field(2, "kind", e.kind == nil, func() any { return *e.kind })
	field(3, "amount", e.amount == nil, func() any { return *e.amount })
	field(4, "price", e.price == nil, func() any { return *e.price })
	field(5, "qty", e.qty == nil, func() any { return *e.qty })
	field(6, "tag", e.tag == nil, func() any { return *e.tag })
	field(7, "ok", e.ok == nil, func() any { return *e.ok })
	field(8, "ts", e.ts == nil, func() any {
		switch e.tsFormat {
		case 0:
			return e.ts.Format("2006-01-02 15:04:05.999999")
		case 1:
			return e.ts.Format(time.RFC3339Nano)
		default:
			return e.ts.UnixMilli()
		}
	})
	b.WriteByte('}')
	return []byte(b.String())
}

// String is a one-line SQL-ish rendering for reproductions.
func (e *event) String() string {
	vals := e.values()
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case nil:
			parts[i] = "NULL"
		case string:
			parts[i] = "'" + strings.ReplaceAll(x, "'", "''") + "'"
		case time.Time:
			parts[i] = "'" + x.Format("2006-01-02 15:04:05.999999") + "'"
		case float64:
			parts[i] = fmt.Sprint(x)
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
