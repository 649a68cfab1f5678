package e2e

import (
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"streamdb/tests/testutil"
)

// PostgreSQL type OIDs.
const (
	oidBool        = 16
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidVarchar     = 1043
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
)

const allTypesDDL = `CREATE STREAM allt (
  b BIGINT, i INT, t TEXT, bo BOOLEAN, f FLOAT8, n NUMERIC, ts TIMESTAMP,
  tz TIMESTAMPTZ, d DATE, iv INTERVAL, s SMALLINT, r REAL, v VARCHAR
) WITH (subject = 'e2e.allt', format = 'json')`

var allTypesOIDs = []uint32{oidInt8, oidInt4, oidText, oidBool, oidFloat8, oidNumeric, oidTimestamp,
	oidTimestamptz, oidDate, oidInterval, oidInt2, oidFloat4, oidVarchar}

// row is one row of allt as native Go values.
type row struct {
	b  int64
	i  int32
	t  string
	bo bool
	f  float64
	n  pgtype.Numeric
	ts time.Time
	tz time.Time
	d  time.Time
	iv pgtype.Interval
	s  int16
	r  float32
	v  string
}

func (r row) args() []any {
	return []any{r.b, r.i, r.t, r.bo, r.f, r.n, r.ts, r.tz, r.d, r.iv, r.s, r.r, r.v}
}

func num(unscaled int64, exp int32) pgtype.Numeric {
	return pgtype.Numeric{Int: big.NewInt(unscaled), Exp: exp, Valid: true}
}

func numText(t *testing.T, n pgtype.Numeric) string {
	t.Helper()
	v, err := n.Value()
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return "NULL"
	}
	return v.(string)
}

var testRows = []row{
	{
		b: 9007199254740993, i: -2147483648, t: "héllo, 'world'", bo: true, f: 0.1,
		n:  num(12345678901234567, -4), // 1234567890123.4567
		ts: time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC),
		tz: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -5*3600)),
		d:  time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		iv: pgtype.Interval{Months: 14, Days: 3, Microseconds: 4*3600e6 + 5*60e6 + 6e6 + 789000, Valid: true},
		s:  -32768, r: 1.5, v: "varchar ✓",
	},
	{
		b: -1, i: 2147483647, t: "", bo: false, f: -1.7976931348623157e308,
		n:  num(-5, -1), // -0.5
		ts: time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC),
		tz: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
		d:  time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		iv: pgtype.Interval{Days: -1, Microseconds: -2 * 3600e6, Valid: true},
		s:  32767, r: -0.25, v: "",
	},
}

// TestExtendedProtocolTypes sends parameters of every type with pgx's
// extended protocol (binary where pgx can), reads them back decoded in
// binary into native Go types, checks the parameter and result type OIDs
// the server describes, and reuses prepared statements.
func TestExtendedProtocolTypes(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, 2*time.Minute)

	tag, err := conn.Exec(ctx, allTypesDDL)
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != "CREATE STREAM" {
		t.Errorf("tag %q, want CREATE STREAM", tag)
	}
	tag, err = conn.Exec(ctx, "CREATE MATERIALIZED VIEW allv AS SELECT * FROM allt")
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != "CREATE MATERIALIZED VIEW" {
		t.Errorf("tag %q, want CREATE MATERIALIZED VIEW", tag)
	}

	// The server infers the parameter types of an INSERT from the columns.
	const insertSQL = "INSERT INTO allt VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
	sd, err := conn.Prepare(ctx, "ins", insertSQL)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if !slices.Equal(sd.ParamOIDs, allTypesOIDs) {
		t.Errorf("INSERT parameter OIDs %v, want %v", sd.ParamOIDs, allTypesOIDs)
	}
	if len(sd.Fields) != 0 {
		t.Errorf("INSERT describes %d result columns, want none", len(sd.Fields))
	}
	// The same prepared statement, executed several times.
	for _, r := range testRows {
		tag, err := conn.Exec(ctx, "ins", r.args()...)
		if err != nil {
			t.Fatalf("insert %v: %v", r, err)
		}
		if tag.String() != "INSERT 0 1" {
			t.Errorf("tag %q, want INSERT 0 1", tag)
		}
	}
	nulls := make([]any, 13)
	nulls[0] = int64(42)
	if _, err := conn.Exec(ctx, "ins", nulls...); err != nil {
		t.Fatalf("insert NULLs: %v", err)
	}
	// Through the statement cache (unnamed statements, described once).
	tag, err = conn.Exec(ctx, "INSERT INTO allt (b, t) VALUES ($1, $2), ($3, $4)", int64(100), "a", int64(101), "b")
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != "INSERT 0 2" {
		t.Errorf("tag %q, want INSERT 0 2", tag)
	}
	if _, err := conn.Exec(ctx, "FLUSH"); err != nil {
		t.Fatal(err)
	}

	// Result columns carry PostgreSQL's type OIDs.
	sel, err := conn.Prepare(ctx, "sel", "SELECT * FROM allv WHERE b = $1")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.ParamOIDs, []uint32{oidInt8}) {
		t.Errorf("SELECT parameter OIDs %v, want [%d]", sel.ParamOIDs, oidInt8)
	}
	var gotOIDs []uint32
	var names []string
	for _, fd := range sel.Fields {
		gotOIDs = append(gotOIDs, fd.DataTypeOID)
		names = append(names, fd.Name)
	}
	if !slices.Equal(gotOIDs, allTypesOIDs) {
		t.Errorf("result OIDs %v, want %v", gotOIDs, allTypesOIDs)
	}
	wantNames := []string{"b", "i", "t", "bo", "f", "n", "ts", "tz", "d", "iv", "s", "r", "v"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("result names %v, want %v", names, wantNames)
	}

	// Binary results scanned into native types, prepared statement reused.
	for _, want := range testRows {
		var got row
		rows, err := conn.Query(ctx, "sel", want.b)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range rows.FieldDescriptions() {
			// pgx asks for text as text; everything else in binary.
			if fd.DataTypeOID != oidText && fd.DataTypeOID != oidVarchar && fd.Format != pgx.BinaryFormatCode {
				t.Errorf("column %s comes in format %d, want binary", fd.Name, fd.Format)
			}
		}
		n := 0
		for rows.Next() {
			n++
			if err := rows.Scan(&got.b, &got.i, &got.t, &got.bo, &got.f, &got.n, &got.ts, &got.tz, &got.d, &got.iv, &got.s, &got.r, &got.v); err != nil {
				t.Fatalf("scan: %v", err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("b = %d: %d rows, want 1", want.b, n)
		}
		compareRow(t, got, want)
	}

	// NULLs come back as NULL in every type.
	var (
		b         int64
		i         *int32
		txt       *string
		bo        *bool
		f         *float64
		n         pgtype.Numeric
		ts, tz, d *time.Time
		iv        pgtype.Interval
		s         *int16
		r         *float32
		v         *string
	)
	if err := conn.QueryRow(ctx, "sel", int64(42)).Scan(&b, &i, &txt, &bo, &f, &n, &ts, &tz, &d, &iv, &s, &r, &v); err != nil {
		t.Fatal(err)
	}
	if i != nil || txt != nil || bo != nil || f != nil || n.Valid || ts != nil || tz != nil || d != nil || iv.Valid || s != nil || r != nil || v != nil {
		t.Errorf("row of NULLs came back with values: %v %v %v %v %v %v %v %v %v %v %v %v", i, txt, bo, f, n, ts, tz, d, iv, s, r, v)
	}

	// A parameter of each type in WHERE.
	first := testRows[0]
	var count int64
	err = conn.QueryRow(ctx, `SELECT count(*) FROM allv WHERE b = $1 AND i = $2 AND t = $3 AND bo = $4 AND f = $5
		AND n = $6 AND ts = $7 AND tz = $8 AND d = $9 AND iv = $10 AND s = $11 AND r = $12 AND v = $13`, first.args()...).Scan(&count)
	if err != nil {
		t.Fatal(err)
	}
	if count != 1 {
		t.Errorf("WHERE with a parameter of every type: count %d, want 1", count)
	}

	// Parameters with explicit casts and no FROM come back unchanged.
	var got row
	err = conn.QueryRow(ctx, `SELECT $1::bigint, $2::int, $3::text, $4::bool, $5::float8, $6::numeric, $7::timestamp,
		$8::timestamptz, $9::date, $10::interval, $11::smallint, $12::real, $13::varchar`, first.args()...).Scan(
		&got.b, &got.i, &got.t, &got.bo, &got.f, &got.n, &got.ts, &got.tz, &got.d, &got.iv, &got.s, &got.r, &got.v)
	if err != nil {
		t.Fatal(err)
	}
	compareRow(t, got, first)

	// Aggregates over a view: count is bigint, sum(bigint) and avg numeric.
	const aggSQL = "SELECT count(*), sum(b), avg(i), max(ts), min(n) FROM allv WHERE b < $1"
	rows, err := conn.Query(ctx, aggSQL, int64(1e18))
	if err != nil {
		t.Fatal(err)
	}
	wantAggOIDs := []uint32{oidInt8, oidNumeric, oidNumeric, oidTimestamp, oidNumeric}
	var aggOIDs []uint32
	for _, fd := range rows.FieldDescriptions() {
		aggOIDs = append(aggOIDs, fd.DataTypeOID)
	}
	rows.Close()
	if !slices.Equal(aggOIDs, wantAggOIDs) {
		t.Errorf("aggregate OIDs %v, want %v", aggOIDs, wantAggOIDs)
	}
	var cnt int64
	var sum, avg, minN pgtype.Numeric
	var maxTS time.Time
	if err := conn.QueryRow(ctx, aggSQL, int64(1e18)).Scan(&cnt, &sum, &avg, &maxTS, &minN); err != nil {
		t.Fatal(err)
	}
	if cnt != 5 || !numEq(sum, "9007199254741235") || !numEq(avg, "-0.5") || !maxTS.Equal(testRows[0].ts) || !numEq(minN, "-0.5") {
		t.Errorf("aggregates: %d %s %s %v %s; want 5 9007199254741235 -0.5 %v -0.5",
			cnt, numText(t, sum), numText(t, avg), maxTS, numText(t, minN), testRows[0].ts)
	}
}

// numEq reports whether n equals the decimal number s.
func numEq(n pgtype.Numeric, s string) bool {
	if !n.Valid || n.NaN || n.InfinityModifier != pgtype.Finite || n.Int == nil {
		return false
	}
	got := new(big.Rat).SetInt(n.Int)
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(n.Exp))), nil))
	if n.Exp < 0 {
		got.Quo(got, scale)
	} else {
		got.Mul(got, scale)
	}
	want, ok := new(big.Rat).SetString(s)
	return ok && got.Cmp(want) == 0
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

func compareRow(t *testing.T, got, want row) {
	t.Helper()
	if got.b != want.b || got.i != want.i || got.t != want.t || got.bo != want.bo || got.s != want.s || got.v != want.v {
		t.Errorf("scalars: got %v %v %q %v %v %q, want %v %v %q %v %v %q",
			got.b, got.i, got.t, got.bo, got.s, got.v, want.b, want.i, want.t, want.bo, want.s, want.v)
	}
	if got.f != want.f && !(math.IsNaN(got.f) && math.IsNaN(want.f)) {
		t.Errorf("float8: got %v, want %v", got.f, want.f)
	}
	if got.r != want.r {
		t.Errorf("real: got %v, want %v", got.r, want.r)
	}
	if g, w := numText(t, got.n), numText(t, want.n); !numEq(got.n, w) {
		t.Errorf("numeric: got %s, want %s", g, w)
	}
	if !got.ts.Equal(want.ts) || got.ts.Location() != time.UTC {
		t.Errorf("timestamp: got %v, want %v (UTC)", got.ts, want.ts)
	}
	if !got.tz.Equal(want.tz) {
		t.Errorf("timestamptz: got %v, want %v", got.tz, want.tz)
	}
	if !got.d.Equal(want.d) {
		t.Errorf("date: got %v, want %v", got.d, want.d)
	}
	if got.iv != want.iv {
		t.Errorf("interval: got %+v, want %+v", got.iv, want.iv)
	}
}

// TestTextAndBinaryAgree reads the same view with the simple protocol (text)
// and the extended protocol (binary) and checks they agree value by value.
func TestTextAndBinaryAgree(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, time.Minute)
	exec(t, conn, allTypesDDL, "CREATE MATERIALIZED VIEW allv AS SELECT * FROM allt")
	for _, r := range testRows {
		if _, err := conn.Exec(ctx, "INSERT INTO allt VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)", r.args()...); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, conn)
	wantRows(t, conn, "SELECT * FROM allv ORDER BY b",
		"-1 2147483647  f -1.7976931348623157e+308 -0.5 1999-12-31 23:59:59.999999 2000-01-01 00:00:00+00 1970-01-01 -1 days -02:00:00 32767 -0.25 ",
		"9007199254740993 -2147483648 héllo, 'world' t 0.1 1234567890123.4567 2026-01-02 03:04:05.123456 2026-01-02 08:04:05+00 2024-02-29 1 year 2 mons 3 days 04:05:06.789 -32768 1.5 varchar ✓",
	)
}

// TestSimpleProtocolAndCommandTags sends several statements in one simple
// query string and checks each statement's CommandComplete tag.
func TestSimpleProtocolAndCommandTags(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, time.Minute)

	results, err := conn.PgConn().Exec(ctx, `
		CREATE STREAM s (k TEXT, v INT) WITH (subject = 'e2e.tags', format = 'json');
		INSERT INTO s VALUES ('a', 1), ('b', 2);
		INSERT INTO s VALUES ('c', 3);
		CREATE MATERIALIZED VIEW mv AS SELECT k, v FROM s;
		INSERT INTO s (k, v) VALUES ('d', 4), ('e', 5), ('f', 6);
		FLUSH;
		SELECT * FROM mv WHERE v <= 5 ORDER BY k;
		SELECT 1, 'x';
		SET application_name = 'tags';
		SHOW application_name;
		BEGIN;
		COMMIT;
		DROP MATERIALIZED VIEW mv;
		DROP STREAM s`).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CREATE STREAM", "INSERT 0 2", "INSERT 0 1", "CREATE MATERIALIZED VIEW", "INSERT 0 3", "FLUSH",
		"SELECT 5", "SELECT 1", "SET", "SHOW", "BEGIN", "COMMIT", "DROP MATERIALIZED VIEW", "DROP STREAM"}
	var got []string
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("statement failed: %v", r.Err)
		}
		got = append(got, r.CommandTag.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("tags:\n got %q\nwant %q", got, want)
	}
	if len(results) == len(want) {
		if n := len(results[6].Rows); n != 5 {
			t.Errorf("SELECT returned %d rows, want 5", n)
		}
		if v := string(results[9].Rows[0][0]); v != "tags" {
			t.Errorf("SHOW application_name = %q, want tags", v)
		}
	}

	// Tags over the extended protocol are the same.
	for _, c := range []struct{ sql, tag string }{
		{"CREATE STREAM s2 (x INT) WITH (subject = 'e2e.tags2')", "CREATE STREAM"},
		{"CREATE MATERIALIZED VIEW c2 AS SELECT count(*) AS n FROM s2", "CREATE MATERIALIZED VIEW"},
		{"INSERT INTO s2 VALUES (1), (2), (3), (4), (5), (6), (7)", "INSERT 0 7"},
		{"FLUSH", "FLUSH"},
		{"SELECT n FROM c2", "SELECT 1"},
		{"DROP MATERIALIZED VIEW c2", "DROP MATERIALIZED VIEW"},
		{"DROP MATERIALIZED VIEW IF EXISTS c2", "DROP MATERIALIZED VIEW"},
		{"DROP STREAM s2", "DROP STREAM"},
		{"DROP STREAM IF EXISTS s2", "DROP STREAM"},
	} {
		tag, err := conn.Exec(ctx, c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if tag.String() != c.tag {
			t.Errorf("%s: tag %q, want %q", c.sql, tag, c.tag)
		}
	}

	// An error in the middle of a simple query string stops it there; the
	// connection stays usable.
	results, err = conn.PgConn().Exec(ctx, "SELECT 1; SELECT * FROM nosuch; SELECT 2").ReadAll()
	wantCode(t, err, "42P01")
	if len(results) < 1 || results[0].CommandTag.String() != "SELECT 1" {
		t.Errorf("results before the error: %+v", results)
	}
	wantRows(t, conn, "SELECT 3", "3")
}

// TestPreparedStatementLifecycle prepares statements, runs them many times,
// deallocates them, and checks a statement prepared before DDL still fails
// or works as PostgreSQL's would.
func TestPreparedStatementLifecycle(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, time.Minute)
	exec(t, conn,
		"CREATE STREAM p (id BIGINT, name TEXT) WITH (subject = 'e2e.prep')",
		"CREATE MATERIALIZED VIEW pv AS SELECT id, name FROM p",
		"CREATE MATERIALIZED VIEW pk AS SELECT id, max(name) AS name FROM p GROUP BY id")
	if _, err := conn.Prepare(ctx, "ins", "INSERT INTO p VALUES ($1, $2)"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if _, err := conn.Exec(ctx, "ins", int64(i), string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	flush(t, conn)
	if _, err := conn.Prepare(ctx, "get", "SELECT name FROM pv WHERE id = $1"); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		var name string
		if err := conn.QueryRow(ctx, "get", int64(i)).Scan(&name); err != nil {
			t.Fatal(err)
		}
		if want := string(rune('a' + i%26)); name != want {
			t.Errorf("id %d: name %q, want %q", i, name, want)
		}
	}
	// A keyed view read by its key: one row per parameter value.
	if _, err := conn.Prepare(ctx, "by_key", "SELECT name FROM pk WHERE id = $1"); err != nil {
		t.Fatal(err)
	}
	for i := range 51 {
		var names []string
		rows, err := conn.Query(ctx, "by_key", int64(i))
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := []string{string(rune('a' + i%26))}
		if i == 50 {
			want = nil
		}
		if !slices.Equal(names, want) {
			t.Errorf("pk id %d: names %q, want %q", i, names, want)
		}
	}
	if err := conn.Deallocate(ctx, "get"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "get", int64(1)); err == nil {
		t.Error("a deallocated statement still runs")
	}
	// Same name prepared again with another query.
	if _, err := conn.Prepare(ctx, "get", "SELECT count(*) FROM pv WHERE id < $1"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, "get", int64(10)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 10 {
		t.Errorf("count %d, want 10", n)
	}
	// Wrong number of parameters is refused (08P01 protocol violation).
	_, err := conn.PgConn().ExecParams(ctx, "SELECT name FROM pv WHERE id = $1", nil, nil, nil, nil).Close()
	wantCode(t, err, "08P01")
	wantRows(t, conn, "SELECT count(*) FROM pv", "50")
}

// TestColumnNames checks the column names and type OIDs the server
// describes for expressions, against PostgreSQL 15's.
func TestColumnNames(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	ctx := testutil.Context(t, 30*time.Second)
	rows, err := conn.Query(ctx, `SELECT 1, 'a' || 'b', '2026-01-02 03:04:05'::timestamp::date, CAST(1 AS bigint), 1::text,
		lower('A'), CASE WHEN true THEN 1 END, COALESCE(NULL, 1), NULLIF(1, 2), 1 + 1,
		date_trunc('day', TIMESTAMP '2026-01-01'), abs(-1), 2.5::float8::int, 1 AS alias, true::text, count(*),
		'{}'::jsonb @? '$.a', '{}'::jsonb @@ '$.a == 1', jsonb_path_exists_opr('{}', '$')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := []struct {
		name string
		oid  uint32
	}{
		{"?column?", oidInt4}, {"?column?", oidText}, {"date", oidDate}, {"int8", oidInt8}, {"text", oidText},
		{"lower", oidText}, {"case", oidInt4}, {"coalesce", oidInt4}, {"nullif", oidInt4}, {"?column?", oidInt4},
		{"date_trunc", oidTimestamp}, {"abs", oidInt4}, {"int4", oidInt4}, {"alias", oidInt4}, {"text", oidText}, {"count", oidInt8},
		{"?column?", oidBool}, {"?column?", oidBool}, {"jsonb_path_exists_opr", oidBool},
	}
	fds := rows.FieldDescriptions()
	if len(fds) != len(want) {
		t.Fatalf("%d columns, want %d", len(fds), len(want))
	}
	for i, fd := range fds {
		if fd.Name != want[i].name || fd.DataTypeOID != want[i].oid {
			t.Errorf("column %d: %s (oid %d), want %s (oid %d)", i+1, fd.Name, fd.DataTypeOID, want[i].name, want[i].oid)
		}
	}
}
