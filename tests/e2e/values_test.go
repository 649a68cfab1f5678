package e2e

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"streamdb/tests/testutil"
)

// valueCase is one value written by INSERT into a table and into a stream:
// either it is refused with code, or it reads back as want (PostgreSQL's
// text) from the table, from a view of the table, and from a view of the
// stream. Never is it acknowledged and then dropped.
type valueCase struct {
	col, sql string // column and SQL expression
	want     string
	code     string
}

var valueCases = []valueCase{
	{col: "n", sql: `'NaN'::decimal`, want: "NaN"},
	{col: "n", sql: `'+inf'`, want: "Infinity"},
	{col: "n", sql: `'-inf'`, want: "-Infinity"},
	{col: "n", sql: `'-Infinity'::numeric`, want: "-Infinity"},
	{col: "n", sql: `'NaN'::float8`, want: "NaN"},
	{col: "n", sql: `10::numeric ^ 1000000`, code: "22003"},
	{col: "n", sql: `'1.500'`, want: "1.500"},
	{col: "f", sql: `'NaN'::float8`, want: "NaN"},
	{col: "f", sql: `'Infinity'`, want: "Infinity"},
	{col: "f", sql: `'-Infinity'::float8`, want: "-Infinity"},
	{col: "f", sql: `1e308::float8 * 10`, code: "22003"},
	{col: "f", sql: `'1e309'::float8`, code: "22003"},
	{col: "f", sql: `'-0'::float8`, want: "-0"},
	{col: "r", sql: `'1e-46'::real`, code: "22003"},
	{col: "r", sql: `'NaN'::real`, want: "NaN"},
	{col: "r", sql: `'-inf'::real`, want: "-Infinity"},
	{col: "b", sql: `'9223372036854775808'::bigint`, code: "22003"},
	{col: "b", sql: `'-9223372036854775808'::bigint`, want: "-9223372036854775808"},
	{col: "ts", sql: `'9999-12-31 23:00'::timestamp + interval '2 hours'`, want: "10000-01-01 01:00:00"},
	{col: "ts", sql: `'infinity'::timestamp`, want: "infinity"},
	{col: "ts", sql: `'-infinity'`, want: "-infinity"},
	{col: "ts", sql: `'0001-01-01 00:00'::timestamp - interval '1 day'`, want: "0001-12-31 00:00:00 BC"},
	{col: "ts", sql: `'294246-12-31 23:00'::timestamp + interval '1 year'`, want: "294247-12-31 23:00:00"},
	{col: "ts", sql: `'294276-12-31 23:00'::timestamp + interval '1 hour'`, code: "22008"},
	{col: "ts", sql: `'2026-01-31'::timestamp + interval '1 mon'`, want: "2026-02-28 00:00:00"},
	{col: "tz", sql: `'10000-01-01 00:00:00+00'::timestamptz`, want: "10000-01-01 00:00:00+00"},
	{col: "d", sql: `'0001-01-01'::date - 1`, want: "0001-12-31 BC"},
	{col: "d", sql: `'9999-12-31'::date + 1`, want: "10000-01-01"},
	{col: "d", sql: `'infinity'::date`, want: "infinity"},
	{col: "iv", sql: `interval '3000000000 hours'`, code: "22015"},
	{col: "iv", sql: `interval '178956970 years 7 mons' + '1 mon'`, code: "22008"},
	{col: "iv", sql: `interval '2562047788 hours'`, want: "2562047788:00:00"},
	{col: "iv", sql: `interval '-178956970 years -8 mons'`, want: "-178956970 years -8 mons"},
	{col: "iv", sql: `interval '1.5 months'`, want: "1 mon 15 days"},
	{col: "s", sql: `'a"b\c` + "\t" + `'`, want: "a\"b\\c\t"},
}

// TestValuesRoundTrip: every value a statement writes is either refused
// with PostgreSQL's SQLSTATE or reads back exactly from the table, from a
// view of the table and from a view of a stream; no acknowledged row is
// dropped by the server's own readers as malformed.
func TestValuesRoundTrip(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	const cols = `n numeric, f double precision, r real, b bigint, ts timestamp, tz timestamptz, d date, iv interval, s text`
	exec(t, conn,
		`CREATE TABLE t (id int PRIMARY KEY, `+cols+`)`,
		`CREATE STREAM s (id int, `+cols+`)`,
		`CREATE MATERIALIZED VIEW tcount AS SELECT count(*) AS n FROM t`,
		`CREATE MATERIALIZED VIEW tall AS SELECT * FROM t`,
		`CREATE MATERIALIZED VIEW scount AS SELECT count(*) AS n FROM s`,
		`CREATE MATERIALIZED VIEW sall AS SELECT * FROM s`,
	)
	ctx := testutil.Context(t, 3*time.Minute)
	written := map[int]valueCase{}
	for i, c := range valueCases {
		id := i + 1
		for _, rel := range []string{"t", "s"} {
			sql := fmt.Sprintf(`INSERT INTO %s (id, %s) VALUES (%d, %s)`, rel, c.col, id, c.sql)
			_, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
			switch {
			case c.code != "":
				wantCode(t, err, c.code)
			case err != nil:
				t.Errorf("%s: %v", sql, err)
			default:
				written[id] = c
			}
		}
	}

	// pgx's binary parameters: timestamp infinity, year 10000, numeric NaN.
	binary := []struct {
		col  string
		arg  any
		want string
		code string
	}{
		{"ts", pgtype.Timestamp{InfinityModifier: pgtype.Infinity, Valid: true}, "infinity", ""},
		{"ts", pgtype.Timestamp{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, "-infinity", ""},
		{"ts", time.Date(10000, 1, 2, 3, 4, 5, 6000, time.UTC), "10000-01-02 03:04:05.000006", ""},
		{"ts", time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), "0006-01-01 00:00:00 BC", ""},
		{"ts", time.Date(294250, 1, 1, 0, 0, 0, 0, time.UTC), "294250-01-01 00:00:00", ""},
		{"tz", pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}, "infinity", ""},
		{"d", pgtype.Date{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, "-infinity", ""},
		{"d", pgtype.Date{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Valid: true}, "10000-01-01", ""},
		{"n", pgtype.Numeric{NaN: true, Valid: true}, "NaN", ""},
		{"n", pgtype.Numeric{InfinityModifier: pgtype.Infinity, Valid: true}, "Infinity", ""},
		{"n", pgtype.Numeric{Int: big.NewInt(-15), Exp: -1, Valid: true}, "-1.5", ""},
		{"iv", pgtype.Interval{Months: -2147483648, Days: -2147483648, Microseconds: -9223372036854775808, Valid: true},
			"-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808", ""},
		{"ts", time.Date(294277, 1, 1, 0, 0, 0, 0, time.UTC), "", "22008"},
	}
	for i, c := range binary {
		id := 1000 + i
		for _, rel := range []string{"t", "s"} {
			sql := fmt.Sprintf(`INSERT INTO %s (id, %s) VALUES ($1, $2)`, rel, c.col)
			_, err := conn.Exec(ctx, sql, id, c.arg)
			switch {
			case c.code != "":
				wantCode(t, err, c.code)
			case err != nil:
				t.Errorf("%s with %v: %v", sql, c.arg, err)
			default:
				written[id] = valueCase{col: c.col, want: c.want}
			}
		}
	}

	flush(t, conn)
	n := len(written)
	wantRows(t, conn, `SELECT n FROM tcount`, fmt.Sprint(n))
	wantRows(t, conn, `SELECT n FROM scount`, fmt.Sprint(n))
	wantRows(t, conn, `SELECT count(*) FROM t`, fmt.Sprint(n))
	for id, c := range written {
		for _, rel := range []string{"t", "tall", "sall"} {
			wantRows(t, conn, fmt.Sprintf(`SELECT %s FROM %s WHERE id = %d`, c.col, rel, id), c.want)
		}
	}
	if got := showStream(t, conn, "s")["skipped_messages"]; got != "0" {
		t.Errorf("stream s skipped %s messages, want 0", got)
	}

	// Binary results: the infinities come back as PostgreSQL's sentinels.
	var ts pgtype.Timestamp
	if err := conn.QueryRow(ctx, `SELECT ts FROM tall WHERE id = 1000`).Scan(&ts); err != nil || ts.InfinityModifier != pgtype.Infinity {
		t.Errorf("binary timestamp infinity read back as %+v, %v", ts, err)
	}
	var num pgtype.Numeric
	if err := conn.QueryRow(ctx, `SELECT n FROM sall WHERE id = 1008`).Scan(&num); err != nil || !num.NaN {
		t.Errorf("binary numeric NaN read back as %+v, %v", num, err)
	}
}

// TestValuesControlCharacterColumn: a column whose name holds a control
// character is written as valid JSON and its rows read back.
func TestValuesControlCharacterColumn(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	name := "a\x01b\"c"
	quoted := `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
	exec(t, conn,
		`CREATE TABLE ct (id int PRIMARY KEY, `+quoted+` text)`,
		`CREATE STREAM cs (id int, `+quoted+` text)`,
		`CREATE MATERIALIZED VIEW ctv AS SELECT id, `+quoted+` FROM ct`,
		`CREATE MATERIALIZED VIEW csv AS SELECT count(*) AS n, min(`+quoted+`) AS v FROM cs`,
		`INSERT INTO ct VALUES (1, 'x')`,
		`INSERT INTO cs VALUES (1, 'y')`,
	)
	flush(t, conn)
	wantRows(t, conn, `SELECT id, `+quoted+` FROM ctv`, "1 x")
	wantRows(t, conn, `SELECT id, `+quoted+` FROM ct`, "1 x")
	wantRows(t, conn, `SELECT n, v FROM csv`, "1 y")
	if got := showStream(t, conn, "cs")["skipped_messages"]; got != "0" {
		t.Errorf("stream cs skipped %s messages, want 0", got)
	}
}

// TestValuesEpochMillisOverflow: a stream event's epoch milliseconds past
// the timestamp range are skipped and counted as malformed, never wrapped
// into another time.
func TestValuesEpochMillisOverflow(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	exec(t, conn,
		`CREATE STREAM ev (id int, ts timestamp)`,
		`CREATE MATERIALIZED VIEW evv AS SELECT id, ts FROM ev`,
	)
	_, js := testutil.JetStream(t, srv.NATSURL())
	testutil.Publish(t, js, "ev", `{"id": 1, "ts": 9223372036854775807}`, `{"id": 2, "ts": 1767225600000}`, `{"id": 3, "ts": -9223372036854775808}`)
	flush(t, conn)
	wantRows(t, conn, `SELECT id, ts FROM evv ORDER BY id`, "2 2026-01-01 00:00:00")
	if got := showStream(t, conn, "ev")["skipped_messages"]; got != "2" {
		t.Errorf("stream ev skipped %s messages, want 2", got)
	}
}
