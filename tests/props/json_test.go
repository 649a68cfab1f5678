package props

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestJSON draws random JSON documents (nesting, unicode, numbers at the
// edges, duplicate keys, empty objects and arrays) and checks the json and
// jsonb operators and functions, the jsonb_path_ functions included, on
// each against PostgreSQL 15: ad hoc over the document as a literal, and
// in materialized views over a table of the documents (views in
// PostgreSQL) through inserts, updates and deletes.
func TestJSON(t *testing.T) {
	r := propRand(t)
	docs := propCases(t, 200)
	p := startPair(t, 15*time.Minute)
	f := &failures{t: t}

	// Ad hoc: each document with a few random expressions.
	exprs := jsonExprs()
	adhoc := 0
	for i := 0; i < docs; i++ {
		d, d2 := lit(randJSON(r, 0)), lit(randJSON(r, 0))
		for k := 0; k < 8; k++ {
			e := exprs[r.IntN(len(exprs))](r)
			q := "SELECT " + strings.NewReplacer("$D2", d2, "$D", d, "$J", d).Replace(e)
			got, want := simple(t, p.ctx, p.sdb, q), simple(t, p.ctx, p.pg, q)
			if !got.sameAs(want) {
				f.add("json expression", q, got, want)
			}
			adhoc++
		}
	}

	// Views over a table of documents.
	p.both("CREATE TABLE jdocs (id int PRIMARY KEY, doc jsonb, j json)")
	views := jsonViews()
	for i, v := range views {
		if _, err := p.pg.Exec(p.ctx, fmt.Sprintf("CREATE VIEW jv%d AS %s", i, v)); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if _, err := p.sdb.Exec(p.ctx, fmt.Sprintf("CREATE MATERIALIZED VIEW jv%d AS %s", i, v), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
	}
	var ids []int
	for i := 1; i <= docs; i++ {
		d := lit(randJSON(r, 0))
		p.both(fmt.Sprintf("INSERT INTO jdocs VALUES (%d, %s, %s)", i, d, d))
		ids = append(ids, i)
	}
	compareJSONViews(p, f, len(views), "after the inserts")
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for _, id := range ids[:len(ids)/3] {
		d := lit(randJSON(r, 0))
		p.both(fmt.Sprintf("UPDATE jdocs SET doc = %s, j = %s WHERE id = %d", d, d, id))
	}
	compareJSONViews(p, f, len(views), "after updating a third of the rows")
	for _, id := range ids[len(ids)/3 : 2*len(ids)/3] {
		p.both(fmt.Sprintf("DELETE FROM jdocs WHERE id = %d", id))
	}
	compareJSONViews(p, f, len(views), "after deleting a third of the rows")
	f.done()
	t.Logf("%d ad hoc expressions over %d documents; %d views over %d documents, updated and deleted", adhoc, docs, len(views), docs)
}

// compareJSONViews compares every view, in a fixed order, with
// PostgreSQL's.
func compareJSONViews(p *pair, f *failures, n int, when string) {
	t := p.t
	if _, err := p.sdb.Exec(p.ctx, "FLUSH"); err != nil {
		t.Fatalf("FLUSH: %v", err)
	}
	for i := 0; i < n; i++ {
		q := fmt.Sprintf("SELECT * FROM jv%d ORDER BY 1, 2", i)
		if got, want := simple(t, p.ctx, p.sdb, q), simple(t, p.ctx, p.pg, q); !got.sameAs(want) {
			f.add("json view "+when, q, got, want)
		}
	}
}

// jsonKeys are the object keys documents use and lookups ask for, so that
// lookups find members: plain, empty, with spaces, quotes and non-ASCII.
var jsonKeys = []string{"a", "b", "k", "id", "", "a b", `q"t`, "é", "日本", "😀", "aa", "z"}

// randJSON is the text of a random JSON document. Objects may repeat a
// key (jsonb keeps the last); strings mix escapes and raw unicode;
// numbers include the edges of numeric's text forms.
func randJSON(r *rand.Rand, depth int) string {
	n := r.IntN(10)
	switch {
	case depth == 0 && r.IntN(2) == 0:
		n = 0 // documents are objects more often than not
	case depth >= 3:
		n = r.IntN(6) + 4 // scalars only
	}
	switch {
	case n < 2:
		var b strings.Builder
		b.WriteByte('{')
		for i, m := 0, r.IntN(4); i < m; i++ {
			if i > 0 {
				b.WriteString(pick(r, ",", ", ", " ,\n"))
			}
			b.WriteString(jsonString(pick(r, jsonKeys...), r))
			b.WriteString(pick(r, ":", ": ", " : "))
			b.WriteString(randJSON(r, depth+1))
		}
		b.WriteByte('}')
		return b.String()
	case n < 4:
		var b strings.Builder
		b.WriteByte('[')
		for i, m := 0, r.IntN(4); i < m; i++ {
			if i > 0 {
				b.WriteString(pick(r, ",", ", "))
			}
			b.WriteString(randJSON(r, depth+1))
		}
		b.WriteByte(']')
		return b.String()
	case n < 6:
		return pick(r, "0", "-0", "1", "-1", "0.1", "1.0", "1.50", "1e308", "-1e308", "1E-300", "2.5e3",
			"123456789012345678901234567890", "-9223372036854775809", "0.000000000000000000001", "3.14159265358979323846",
			"32767", "-32769", "2147483647", "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
			"9223372036854775808", "-9223372036854775808", "999999999999999999", "1000000000000000000", "1e-400", "-1E+400",
			strconv.Itoa(r.IntN(2000)-1000), strconv.FormatFloat(r.Float64()*100, 'f', r.IntN(6), 64))
	case n < 8:
		return jsonString(pick(r, jsonKeys...)+pick(r, "", "x", "é", "\t", "\\", "/", "日本語", "😀", " ", "\u2028"), r)
	case n < 9:
		return pick(r, "true", "false")
	}
	return "null"
}

// jsonString writes s as a JSON string, escaping some characters that
// need none (\u00e9, \/) to exercise the escapes.
func jsonString(s string, r *rand.Rand) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\t':
			b.WriteString(pick(r, `\t`, `\u0009`))
		case c == '/':
			b.WriteString(pick(r, `/`, `\/`))
		case c > 0x7f && c < 0x10000 && r.IntN(3) == 0:
			fmt.Fprintf(&b, `\u%04x`, c)
		case c >= 0x10000 && r.IntN(3) == 0:
			c -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04X`, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// randKey is a key as a SQL string literal.
func randKey(r *rand.Rand) string { return lit(pick(r, jsonKeys...)) }

// randPathArray is a text[] path literal for #>, #>>, #-, jsonb_set.
func randPathArray(r *rand.Rand) string {
	parts := make([]string, 1+r.IntN(3))
	for i := range parts {
		if r.IntN(3) == 0 {
			parts[i] = strconv.Itoa(r.IntN(4) - 1)
		} else {
			k := pick(r, "a", "b", "k", "id", "z")
			parts[i] = k
		}
	}
	return lit("{" + strings.Join(parts, ",") + "}")
}

// randJSONPath is a random path of the subset the jsonb_path_ functions
// read.
func randJSONPath(r *rand.Rand) string {
	key := func() string {
		k := pick(r, "a", "b", "k", "id", "z")
		if r.IntN(4) == 0 {
			return `."` + k + `"`
		}
		return "." + k
	}
	var b strings.Builder
	b.WriteString(pick(r, "", "", "lax ", "strict "))
	b.WriteString("$")
	for i, n := 0, r.IntN(3); i < n; i++ {
		switch r.IntN(8) {
		case 0, 1, 2:
			b.WriteString(key())
		case 3:
			b.WriteString("[*]")
		case 4:
			b.WriteString(pick(r, "[0]", "[1]", "[last]", "[0 to 1]", "[last - 1]", "[1 to last]", "[0, 2]"))
		case 5:
			b.WriteString(".*")
		case 6:
			b.WriteString(pick(r, ` ? (@ > 0)`, ` ? (@ == "a")`, ` ? (@.a != null)`, ` ? (@ like_regex "^a" flag "i")`,
				` ? (@ starts with "a")`, ` ? (exists(@.b))`, ` ? (@.type() == "number" && @ < 10)`, ` ? (@ == 1 || @ == true)`,
				` ? (!(@ > 1))`, ` ? ((@ > 1) is unknown)`))
		case 7:
			b.WriteString(pick(r, ".type()", ".size()"))
		}
	}
	return b.String()
}

// randJSONPredicate is a random predicate path for jsonb_path_match and @@.
func randJSONPredicate(r *rand.Rand) string {
	return pick(r, "", "strict ") + pick(r, "$.a == 1", "$.a > $.b", `$.k starts with "a"`, "exists($.a[*] ? (@ > 0))",
		`$[*] == "a"`, "$.size() > 1", "$.a.type() == \"array\"", "$ == null", "$.b + 1 > 2", "$.a == $.a")
}

// jsonExprs are the expressions the test evaluates ad hoc, over $D and
// $D2 (jsonb documents) and $J (the same text as json).
func jsonExprs() []func(r *rand.Rand) string {
	k := randKey
	fixed := func(s string) func(*rand.Rand) string { return func(*rand.Rand) string { return s } }
	return []func(r *rand.Rand) string{
		fixed("$D::jsonb"),
		fixed("$J::json"),
		fixed("($J::json)::text"),
		func(r *rand.Rand) string { return "$D::jsonb -> " + k(r) },
		func(r *rand.Rand) string { return "$D::jsonb ->> " + k(r) },
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb -> %d", r.IntN(5)-2) },
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb ->> %d", r.IntN(5)-2) },
		func(r *rand.Rand) string { return "$J::json -> " + k(r) },
		func(r *rand.Rand) string { return "$J::json ->> " + k(r) },
		func(r *rand.Rand) string { return "$D::jsonb #> " + randPathArray(r) },
		func(r *rand.Rand) string { return "$D::jsonb #>> " + randPathArray(r) },
		fixed("$D::jsonb @> $D2::jsonb"),
		fixed("$D::jsonb <@ $D2::jsonb"),
		fixed("$D::jsonb @> $D::jsonb"),
		func(r *rand.Rand) string { return "$D::jsonb ? " + k(r) },
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb ?| array[%s, %s]", k(r), k(r)) },
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb ?& array[%s, %s]", k(r), k(r)) },
		fixed("$D::jsonb || $D2::jsonb"),
		func(r *rand.Rand) string { return "$D::jsonb - " + k(r) },
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb - %d", r.IntN(5)-2) },
		func(r *rand.Rand) string { return "$D::jsonb #- " + randPathArray(r) },
		fixed("$D::jsonb = $D2::jsonb"),
		fixed("$D::jsonb < $D2::jsonb"),
		fixed("$D::jsonb >= $D2::jsonb"),
		fixed("jsonb_typeof($D)"),
		fixed("json_typeof($J)"),
		fixed("jsonb_array_length($D)"),
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_extract_path($D, %s, '0')", k(r)) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_extract_path_text($D, %s)", k(r)) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_set($D, %s, $D2)", randPathArray(r)) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_set($D, %s, $D2, false)", randPathArray(r)) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_insert($D, %s, $D2)", randPathArray(r)) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_insert($D, %s, $D2, true)", randPathArray(r)) },
		fixed("jsonb_strip_nulls($D)"),
		fixed("jsonb_pretty($D)"),
		fixed("to_jsonb($D::jsonb ->> 'a')"),
		fixed("to_jsonb(($D::jsonb -> 'a')::text)"),
		fixed("jsonb_build_object('x', $D::jsonb, 'y', $D2::jsonb)"),
		fixed("jsonb_build_array($D::jsonb, $D2::jsonb, 1, 'a', NULL)"),
		fixed("($D::jsonb)::text"),
		fixed("(SELECT jsonb_agg(x ORDER BY x) FROM jsonb_array_elements($D) AS t(x))"),
		fixed("(SELECT string_agg(x, '|' ORDER BY x) FROM jsonb_array_elements_text($D) AS t(x))"),
		fixed("(SELECT string_agg(k, '|' ORDER BY k) FROM jsonb_object_keys($D) AS t(k))"),
		fixed("(SELECT jsonb_object_agg(key, value) FROM jsonb_each($D))"),
		fixed("(SELECT string_agg(s, '|' ORDER BY s) FROM (SELECT key || '=' || coalesce(value, 'NULL') AS s FROM jsonb_each_text($D)) AS e)"),
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_path_query_array($D, %s)", lit(randJSONPath(r))) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_path_query_first($D, %s)", lit(randJSONPath(r))) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_path_exists($D, %s)", lit(randJSONPath(r))) },
		func(r *rand.Rand) string {
			return fmt.Sprintf("jsonb_path_query_array($D, %s, silent => true)", lit(randJSONPath(r)))
		},
		func(r *rand.Rand) string {
			return fmt.Sprintf("(SELECT jsonb_agg(x ORDER BY x) FROM jsonb_path_query($D, %s) AS t(x))", lit(randJSONPath(r)))
		},
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb @? %s", lit(randJSONPath(r))) },
		func(r *rand.Rand) string { return fmt.Sprintf("jsonb_path_match($D, %s)", lit(randJSONPredicate(r))) },
		func(r *rand.Rand) string { return fmt.Sprintf("$D::jsonb @@ %s", lit(randJSONPredicate(r))) },
		fixed("($D::jsonb -> 'a')::numeric"),
		fixed("($D::jsonb ->> 'a')::numeric"),
		fixed("($D::jsonb -> 'a')::bool"),
		fixed("($D::jsonb -> 'a')::int"),
		fixed("($D::jsonb -> 'a')::float8"),
	}
}

// jsonViews are the views kept over jdocs: none of their expressions
// fails on any document (a view skips a row that fails where PostgreSQL's
// query fails).
func jsonViews() []string {
	return []string{
		"SELECT id, doc -> 'a' AS a, doc ->> 'b' AS b, doc #> '{a,0}' AS a0, doc #>> '{k}' AS k, j -> 'a' AS ja, j ->> 'k' AS jk FROM jdocs",
		"SELECT id, doc @> '{\"a\": 1}' AS c1, doc <@ '{\"a\": 1, \"b\": [1, 2]}' AS c2, doc ? 'a' AS e1, doc ?| array['b', 'k'] AS e2, doc ?& array['a', 'b'] AS e3 FROM jdocs",
		"SELECT id, jsonb_typeof(doc) AS t, jsonb_strip_nulls(doc) AS s, doc || '{\"z\": 1}' AS c, CASE WHEN jsonb_typeof(doc) IN ('object', 'array') THEN doc - 'a' END AS d, CASE WHEN jsonb_typeof(doc) = 'object' THEN doc #- '{a,0}' END AS dp FROM jdocs",
		"SELECT id, jsonb_path_query_array(doc, '$.a[*] ? (@ > 0)') AS p1, jsonb_path_exists(doc, 'strict $.a', silent => true) AS p2, doc @? '$.*' AS p3, doc @@ '$.a == 1' AS p4 FROM jdocs",
		"SELECT id, CASE WHEN jsonb_typeof(doc) = 'array' THEN jsonb_array_length(doc) END AS n, CASE WHEN jsonb_typeof(doc) = 'object' THEN jsonb_set(doc, '{a}', '[1]') END AS st FROM jdocs",
		"SELECT doc -> 'a' AS a, count(*) AS n FROM jdocs GROUP BY doc -> 'a'",
		"SELECT jsonb_typeof(doc) AS t, count(*) AS n, jsonb_agg(jsonb_build_array(id, doc) ORDER BY jsonb_build_array(id, doc)) AS docs FROM jdocs GROUP BY 1",
		"SELECT DISTINCT doc ->> 'k' AS k, jsonb_typeof(doc -> 'k') AS t FROM jdocs",
		"SELECT jsonb_typeof(doc) AS t, jsonb_object_agg(id, doc -> 'b') AS o FROM jdocs GROUP BY 1",
		"SELECT id, jsonb_extract_path(doc, 'a', '0') AS ep, jsonb_extract_path_text(doc, 'k', 'k') AS ept, jsonb_pretty(doc) AS p, to_jsonb(doc ->> 'k') AS tj, jsonb_build_object('d', doc, 'i', id) AS bo, CASE WHEN jsonb_typeof(doc) = 'object' THEN jsonb_insert(doc, '{new}', '[1]') END AS ins, CASE WHEN jsonb_typeof(doc) = 'array' THEN jsonb_insert(doc, '{0}', '\"x\"', true) END AS insa, json_typeof(j) AS jt, j::text AS jtext, doc::text AS dtext FROM jdocs",
		"SELECT id, CASE WHEN jsonb_typeof(doc -> 'a') = 'number' THEN (doc -> 'a')::numeric END AS an, CASE WHEN jsonb_typeof(doc -> 'a') = 'boolean' THEN (doc -> 'a')::bool END AS ab, (doc ->> 'k') IS NULL AS kn FROM jdocs",
		"SELECT doc ->> 'a' AS a, jsonb_typeof(doc -> 'a') AS t, count(*) AS n, jsonb_agg(id ORDER BY id) AS ids FROM jdocs WHERE doc ? 'a' GROUP BY 1, 2",
	}
}
