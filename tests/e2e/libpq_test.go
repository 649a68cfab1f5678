package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"streamdb/tests/testutil"
)

// TestLibPQLikePostgres: lib/pq (database/sql) reads every type, lists
// tables through information_schema, binds parameters, commits and rolls
// back, copies rows in with pq.CopyIn and reads a cursor, with the same
// answers from streamdb as from PostgreSQL 15.
func TestLibPQLikePostgres(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 2*time.Minute)
	got, want := libpqSession(ctx, t, srv.DSN()), libpqSession(ctx, t, pg.DSN())
	if len(want) < 7 {
		t.Fatalf("PostgreSQL's session: %q", want)
	}
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("line %d:\n got  %s\n want %s", i+1, g, w)
		}
	}
}

// libpqSession runs the lib/pq checks on the server at dsn and returns one
// line per step: its result or its SQLSTATE.
func libpqSession(ctx context.Context, t *testing.T, dsn string) []string {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var out []string
	note := func(what string, err error, v ...any) {
		if e, ok := err.(*pq.Error); ok {
			out = append(out, fmt.Sprintf("%s: ERROR %s", what, e.Code))
			return
		} else if err != nil {
			out = append(out, fmt.Sprintf("%s: ERROR %v", what, err))
			return
		}
		out = append(out, fmt.Sprintf("%s: %v", what, fmt.Sprint(v...)))
	}
	_, err = db.ExecContext(ctx, `CREATE TABLE lp (id int PRIMARY KEY, name text, tags text[])`)
	note("create", err)
	var tables []string
	rows, err := db.QueryContext(ctx, `SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)
	if err == nil {
		for rows.Next() {
			var n, k string
			err = rows.Scan(&n, &k)
			tables = append(tables, n+" "+k)
		}
		rows.Close()
	}
	note("tables", err, tables)

	var (
		i2 int16
		i8 int64
		f  float64
		n  string
		b  bool
		d  time.Time
		ts time.Time
		tz time.Time
		iv string
		by []byte
		ar []int64
	)
	err = db.QueryRowContext(ctx, `SELECT 2::int2, 9007199254740993::int8, 2.5::float8, 12.50::numeric, true, '2020-02-29'::date,
		'2020-01-02 03:04:05.25'::timestamp, '2020-01-02 03:04:05+02'::timestamptz, '1 day 02:00'::interval, '\x00ff'::bytea, '{1,2}'::int8[]`).
		Scan(&i2, &i8, &f, &n, &b, &d, &ts, &tz, &iv, &by, pq.Array(&ar))
	note("types", err, i2, " ", i8, " ", f, " ", n, " ", b, " ", d.UTC(), " ", ts.UTC(), " ", tz.UTC(), " ", iv, " ", by, " ", ar)

	var tm, ttz, tp time.Time
	err = db.QueryRowContext(ctx, `SELECT '12:34:56.5'::time, '12:34:56.5-03:30'::timetz, $1::time`, "01:02:03").Scan(&tm, &ttz, &tp)
	note("times", err, tm.Format("15:04:05.999999"), " ", ttz.Format("15:04:05.999999 -07:00"), " ", tp.Format("15:04:05"))

	var s string
	err = db.QueryRowContext(ctx, `SELECT $1::text || $2::int`, "n", 5).Scan(&s)
	note("params", err, s)

	tx, err := db.BeginTx(ctx, nil)
	if err == nil {
		_, err = tx.ExecContext(ctx, `INSERT INTO lp VALUES (1, 'gone', NULL)`)
		if err == nil {
			err = tx.Rollback()
		}
	}
	note("rollback", err)
	tx, err = db.BeginTx(ctx, nil)
	if err == nil {
		var st *sql.Stmt
		if st, err = tx.Prepare(pq.CopyIn("lp", "id", "name", "tags")); err == nil {
			for i, name := range []string{"ann", "bo b", ""} {
				if _, err = st.ExecContext(ctx, i+2, name, pq.Array([]string{name, "x"})); err != nil {
					break
				}
			}
			if err == nil {
				_, err = st.ExecContext(ctx)
			}
			st.Close()
		}
		if err == nil {
			err = tx.Commit()
		} else {
			tx.Rollback()
		}
	}
	note("copy in", err)

	tx, err = db.BeginTx(ctx, nil)
	var fetched []string
	if err == nil {
		if _, err = tx.ExecContext(ctx, `DECLARE c CURSOR FOR SELECT id, name, tags FROM lp ORDER BY id`); err == nil {
			for _, q := range []string{`FETCH 2 FROM c`, `FETCH ALL FROM c`} {
				r, qerr := tx.QueryContext(ctx, q)
				if qerr != nil {
					err = qerr
					break
				}
				for r.Next() {
					var id int
					var name string
					var tags []string
					err = r.Scan(&id, &name, pq.Array(&tags))
					fetched = append(fetched, fmt.Sprintf("%d %q %q", id, name, tags))
				}
				r.Close()
				fetched = append(fetched, "|")
			}
		}
		tx.Commit()
	}
	note("cursor", err, strings.Join(fetched, " "))
	return out
}
