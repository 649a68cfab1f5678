package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// valueForms are inputs in PostgreSQL 15's documented forms and outputs
// whose text or binary form has details to get right. Each is compared
// with a real PostgreSQL: the same bytes in text and in binary, or the same
// SQLSTATE.
var valueForms = []struct{ typ, in string }{
	// timestamp ignores an offset or zone; timestamptz applies it.
	{"timestamp", "2026-01-02 03:04:05+01:00"},
	{"timestamptz", "2026-01-02 03:04:05+01:00"},
	{"timestamp", "2020-07-05 12:00 Europe/Berlin"},
	{"timestamptz", "2020-07-05 12:00 Europe/Berlin"},
	{"timestamptz", "2020-01-05 12:00 America/New_York"},
	{"timestamptz", "2020-01-05 12:00 america/new_york"},
	{"timestamptz", "2020-01-05 12:00 UTC"},
	{"timestamptz", "2018-03-11 02:30 America/New_York"},
	{"timestamptz", "2018-11-04 01:30 America/New_York"},
	{"timestamptz", "Jan 5 04:05:06 2020 PST"},
	{"timestamptz", "2020-01-01 12:00:00 GMT+3"},
	{"timestamptz", "2020-01-01 12:00 Mars/Olympus"},
	{"timestamptz", "2020-01-01 12:00 +16"},
	{"timestamptz", "2020-01-05T04:05:06.789-08"},
	// What lib/pq and JDBC send for a date.
	{"date", "2026-01-02 00:00:00Z"},
	{"date", "2026-01-02 +00"},
	// BC, infinity, epoch, 24:00, leap second.
	{"date", "0044-03-15 BC"},
	{"timestamp", "0044-03-15 10:00:00 BC"},
	{"timestamptz", "0001-12-31 23:00:00+00 BC"},
	{"date", "4714-11-24 BC"},
	{"date", "4714-11-23 BC"},
	{"date", "0000-01-01"},
	{"date", "infinity"},
	{"date", "-infinity"},
	{"timestamp", "infinity"},
	{"timestamptz", "-infinity"},
	{"timestamp", "+infinity"},
	{"timestamp", "epoch"},
	{"date", "epoch"},
	{"timestamp", "2020-01-01 24:00:00"},
	{"timestamp", "2020-01-01 24:00:01"},
	{"timestamp", "2020-12-31 23:59:60"},
	// Other date spellings (DateStyle ISO, MDY).
	{"date", "January 8, 1999"},
	{"date", "20200101"},
	{"date", "2020-1-5"},
	{"date", "1/8/1999"},
	{"date", "08-Jan-1999"},
	{"date", "99-01-08"},
	{"date", "1999.008"},
	{"date", "J2451187"},
	{"date", "Monday, January 8, 2018"},
	{"date", "2020-02-30"},
	{"date", "13/01/2020"},
	{"date", "not a date"},
	{"timestamp", "20200105T040506"},
	{"timestamp", "2020-01-05 04:05 PM"},
	{"timestamp", "12:00:00"},
	// Fractions round to microseconds, as PostgreSQL does.
	{"timestamp", "2020-01-01 12:00:00.1234567"},
	{"timestamp", "2020-12-31 23:59:59.9999995"},
	{"timestamptz", "2020-01-01 12:00:00.0000005+00"},
	// Intervals.
	{"interval", "P1Y2M3DT4H5M6S"},
	{"interval", "PT1.5S"},
	{"interval", "P0001-02-03T04:05:06"},
	{"interval", "@ 1 hour ago"},
	{"interval", "1.5 months"},
	{"interval", "1.7 years"},
	{"interval", "1-2"},
	{"interval", "-1 day +02:03:04.5"},
	{"interval", "1 hour 1 hour"},
	{"interval", "3000000000 hours"},
	{"interval", "178956970 years 8 mons"},
	{"interval", "not an interval"},
	// Times of day: 24:00, AM/PM, zones, 'allballs', precision, bad input.
	{"time", "12:34:56.789"},
	{"time", "1:2"},
	{"time", "24:00:00"},
	{"time", "04:05 PM"},
	{"time", "allballs"},
	{"time", "12:34:56+02"},
	{"time", "2003-04-12 04:05:06 Europe/Berlin"},
	{"time(2)", "23:59:59.999"},
	{"time", "24:00:01"},
	{"timetz", "12:34:56.5-03:30"},
	{"timetz", "12:34:56"},
	{"timetz", "040506-08"},
	{"timetz", "12:00 PST"},
	{"timetz", "2003-04-12 04:05:06 Europe/Berlin"},
	{"time with time zone", "00:00:00+15:59:59"},
	{"time(0) with time zone", "23:59:59.5+01"},
	{"timetz", "12:34:56 Europe/Berlin"},
	{"timetz", "12:00+16"},
	// Booleans.
	{"boolean", "tr"},
	{"boolean", "ye"},
	{"boolean", "of"},
	{"boolean", "on"},
	{"boolean", "o"},
	{"boolean", " FALSE "},
	{"boolean", "truex"},
	// Numbers.
	{"numeric", "-0"},
	{"numeric", "-0.00"},
	{"float8", "NaN"},
	{"real", "NaN"},
}

// valueExprs are expressions whose results must print as PostgreSQL's.
var valueExprs = []string{
	`U&'\00e9'`,
	`U&'d!0061t!+000061' UESCAPE '!'`,
	`U&'\D83D\DE00'`,
	`U&'\d800'`,
	`U&'\zzzz'`,
	`U&'\0000'`,
	`U&'a' UESCAPE '+'`,
	`'-0'::numeric * 1`,
	`-(0::numeric)`,
	`-0.0::numeric`,
	`'NaN'::float8 * 1`,
	`'NaN'::real`,
	`interval '-178956970 years -8 mons' + interval '-2147483648 days' + interval '-2562047788:00:54.775807' - interval '1 microsecond'`,
	`'0001-01-01'::date - 1`,
	`'0001-01-01 00:00'::timestamp - interval '1 day'`,
	`time '23:00' + interval '2 hours'`,
	`time '12:00' - time '13:30'`,
	`date '2020-01-01' + timetz '12:00+02'`,
	`timetz '12:00+02' < timetz '11:00+01'`,
	`make_time(24, 0, 0)`,
	`extract(epoch from timetz '12:00-03:30')`,
	`date_trunc('minute', time '12:34:56')`,
}

// TestValueFormsLikePostgres runs every input of valueForms, as a literal
// and as a text parameter, and every expression of valueExprs through
// streamdb and PostgreSQL 15, in text and in binary.
func TestValueFormsLikePostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	sd, want := srv.Conn(t).PgConn(), pg.Conn(t).PgConn()
	var queries []query
	for _, c := range valueForms {
		lit := "'" + strings.ReplaceAll(c.in, "'", "''") + "'::" + c.typ
		queries = append(queries, query{sql: "SELECT " + lit}, query{sql: "SELECT $1::text::" + c.typ, arg: c.in})
	}
	for _, e := range valueExprs {
		queries = append(queries, query{sql: "SELECT " + e})
	}
	sameResultsAsPostgres(ctx, t, sd, want, queries)
}

// sameResultsAsPostgres runs each query on streamdb (sd) and PostgreSQL (pg), in
// text and in binary, and fails the test where the answers differ.
func sameResultsAsPostgres(ctx context.Context, t *testing.T, sd, pg *pgconn.PgConn, queries []query) {
	t.Helper()
	for _, q := range queries {
		for _, binary := range []bool{false, true} {
			if got, want := q.run(ctx, sd, binary), q.run(ctx, pg, binary); got != want {
				t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
			}
		}
	}
}

// TestValueFormsRoundTrip: values in these forms read back the same from
// a table, and from a materialized view over it, as from PostgreSQL's
// table (BC dates, infinities, zone names, intervals).
func TestValueFormsRoundTrip(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	conn, pgConn := srv.Conn(t), pg.Conn(t)
	const cols = `id int PRIMARY KEY, d date, ts timestamp, tz timestamptz, iv interval, n numeric, b boolean, s text`
	rows := []string{
		`(1, '0044-03-15 BC', '0044-03-15 10:00:00 BC', '0001-12-31 23:00:00+00 BC', 'P1Y2M3DT4H5M6S', '-0', 'tr', U&'\00e9')`,
		`(2, 'infinity', 'infinity', '-infinity', '@ 1 hour ago', '-0.00', 'of', U&'d!0061t!+000061' UESCAPE '!')`,
		`(3, '-infinity', '-infinity', 'infinity', '1.5 months', 'NaN', 'ye', 'x')`,
		`(4, 'January 8, 1999', '2026-01-02 03:04:05+01:00', '2020-07-05 12:00 Europe/Berlin', 'PT1.5S', '1e-3', 'on', '')`,
		`(5, '2026-01-02 00:00:00Z', '2020-12-31 23:59:59.9999995', '2026-01-02 03:04:05+01:00', '-178956970 years -8 mons', '0', 'n', 'y')`,
		`(6, '5874897-12-31', '294246-12-31 23:59:59.999999', '4714-11-24 00:00:00+00 BC', '-1 day +02:03:04.5', '1', 'f', 'z')`,
	}
	for _, c := range []*pgx.Conn{conn, pgConn} {
		exec(t, c, `CREATE TABLE vf (`+cols+`)`, `INSERT INTO vf VALUES `+strings.Join(rows, ", "))
	}
	exec(t, conn, `CREATE MATERIALIZED VIEW vfv AS SELECT * FROM vf`)
	flush(t, conn)
	for _, binary := range []bool{false, true} {
		want := query{sql: `SELECT * FROM vf ORDER BY id`}.run(ctx, pgConn.PgConn(), binary)
		for _, rel := range []string{"vf", "vfv"} {
			q := query{sql: `SELECT * FROM ` + rel + ` ORDER BY id`}
			if got := q.run(ctx, conn.PgConn(), binary); got != want {
				t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
			}
		}
	}
}

// query is one statement, with at most one text parameter.
type query struct {
	sql string
	arg string
}

func (q query) String() string {
	if q.arg == "" && !strings.Contains(q.sql, "$1") {
		return q.sql
	}
	return fmt.Sprintf("%s with $1 = %q", q.sql, q.arg)
}

// run returns the result's column types and raw values (text or binary),
// or the error's SQLSTATE, as one comparable string.
func (q query) run(ctx context.Context, c *pgconn.PgConn, binary bool) string {
	var params [][]byte
	if strings.Contains(q.sql, "$1") {
		params = [][]byte{[]byte(q.arg)}
	}
	format := int16(0)
	if binary {
		format = 1
	}
	r := c.ExecParams(ctx, q.sql, params, nil, nil, []int16{format}).Read()
	if r.Err != nil {
		var pe *pgconn.PgError
		if errors.As(r.Err, &pe) {
			return "ERROR " + pe.Code
		}
		return "ERROR " + r.Err.Error()
	}
	var b bytes.Buffer
	for _, f := range r.FieldDescriptions {
		fmt.Fprintf(&b, "oid %d; ", f.DataTypeOID)
	}
	for _, row := range r.Rows {
		for _, v := range row {
			if v == nil {
				b.WriteString("NULL ")
			} else if binary {
				fmt.Fprintf(&b, "%x ", v)
			} else {
				fmt.Fprintf(&b, "%q ", v)
			}
		}
		b.WriteString("| ")
	}
	return b.String()
}

// TestCharLikePostgres: character(n) values read back blank-padded, with
// bpchar's OID and typmod, from a table, a view over it and a view over a
// stream, as from PostgreSQL's table; their trailing spaces are
// insignificant to length, || and comparisons, and a longer value is 22001.
func TestCharLikePostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	conn, pgConn := srv.Conn(t), pg.Conn(t)
	values := `(1, 'a'), (2, ''), (3, 'abc'), (4, 'abc   '), (5, ' a'), (6, '日本'), (7, NULL)`
	for _, c := range []*pgx.Conn{conn, pgConn} {
		exec(t, c, `CREATE TABLE ch (id int PRIMARY KEY, c char(3))`, `INSERT INTO ch VALUES `+values)
		wantCode(t, execErr(t, c, `INSERT INTO ch VALUES (8, 'abcd')`), "22001")
	}
	exec(t, conn, `CREATE STREAM chs (id int, c character(3))`, `INSERT INTO chs VALUES `+values,
		`CREATE MATERIALIZED VIEW chv AS SELECT id, c FROM ch`,
		`CREATE MATERIALIZED VIEW chsv AS SELECT id, c FROM chs`)
	wantCode(t, execErr(t, conn, `INSERT INTO chs VALUES (8, 'abcd')`), "22001")
	flush(t, conn)
	for _, binary := range []bool{false, true} {
		want := query{sql: `SELECT id, c FROM ch ORDER BY id`}.run(ctx, pgConn.PgConn(), binary)
		for _, rel := range []string{"ch", "chv", "chsv"} {
			q := query{sql: `SELECT id, c FROM ` + rel + ` ORDER BY id`}
			if got := q.run(ctx, conn.PgConn(), binary); got != want {
				t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
			}
		}
		for _, sql := range []string{
			`SELECT id, length(c), c || 'x', c = 'a', length(c::text), CAST(c AS char(5)) FROM ch ORDER BY id`,
			`SELECT min(c), max(c), count(c) FROM ch`,
			`SELECT c, count(*) FROM ch GROUP BY c ORDER BY c`,
			`SELECT id FROM ch WHERE c = 'abc  ' OR 'a ' = c OR c > 'ab   ' ORDER BY id`,
			`SELECT 'ab'::char(3), 'abcd'::char(2), 'x'::character, 'ab '::bpchar(4), $1::char(4)`,
		} {
			q := query{sql: sql, arg: "é"}
			if !strings.Contains(sql, "$1") {
				q.arg = ""
			}
			if got, want := q.run(ctx, conn.PgConn(), binary), q.run(ctx, pgConn.PgConn(), binary); got != want {
				t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
			}
		}
	}
	// A character(n) column's RowDescription has PostgreSQL's typmod n+4.
	r := conn.PgConn().ExecParams(ctx, `SELECT c FROM ch WHERE id = 1`, nil, nil, nil, nil).Read()
	if r.Err != nil || len(r.FieldDescriptions) != 1 || r.FieldDescriptions[0].TypeModifier != 7 {
		t.Errorf("char(3) column: %v %+v, want typmod 7", r.Err, r.FieldDescriptions)
	}
}
