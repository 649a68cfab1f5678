package e2e

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"streamdb/tests/testutil"
)

// TestTimeDriver: time and timetz through pgx. pgx sends and reads time in
// binary (its pgtype.Time); timetz, which pgx has no codec for, is read as
// text and as raw binary (microseconds, then the zone in seconds west). A
// table, a view over it and a view over a stream read back the same bytes
// as PostgreSQL's table, in both formats, also after a restart, as does a
// view with time and timetz constants; the stream's JSON carries the times
// as text.
func TestTimeDriver(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, 3*time.Minute)
	conn, pgConn := srv.Conn(t), pg.Conn(t)
	const insert = `INSERT INTO tod VALUES ($1, $2, $3)`
	rows := []struct {
		id int32
		t  pgtype.Time
		tz string
	}{
		{1, pgtype.Time{Microseconds: 45296789000, Valid: true}, "12:34:56.789+02"},
		{2, pgtype.Time{Microseconds: 86400e6, Valid: true}, "00:00:00-03:30"},
		{3, pgtype.Time{}, "23:59:59.999999+15:59:59"},
	}
	for _, c := range []*pgx.Conn{conn, pgConn} {
		exec(t, c, `CREATE TABLE tod (id int PRIMARY KEY, t time, tz timetz)`)
		for _, r := range rows {
			if _, err := c.Exec(ctx, insert, r.id, r.t, r.tz); err != nil {
				t.Fatalf("%s with %v: %v", insert, r, err)
			}
		}
	}
	exec(t, conn, `CREATE STREAM tods (id int, t time, tz timetz) WITH (subject = 'time.tods')`,
		`CREATE MATERIALIZED VIEW todv AS SELECT * FROM tod`,
		`CREATE MATERIALIZED VIEW todsv AS SELECT * FROM tods`,
		`CREATE MATERIALIZED VIEW todc AS SELECT id, t > time '12:00' AS pm, tz = timetz '12:34:56.789+02' AS eq, `+
			`t - time '00:00:00.5' AS since FROM tod`,
		`INSERT INTO tods SELECT * FROM tod`)
	flush(t, conn)

	// pgx's own types, in the extended protocol (binary time) and the simple one.
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		got, err := conn.Query(ctx, `SELECT t, tz FROM tod ORDER BY id`, mode)
		if err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		i := 0
		for ; got.Next(); i++ {
			var tm pgtype.Time
			var tz string
			if err := got.Scan(&tm, &tz); err != nil {
				t.Fatalf("mode %v: scan: %v", mode, err)
			}
			if tm != rows[i].t || tz != map[int]string{0: "12:34:56.789+02", 1: "00:00:00-03:30", 2: "23:59:59.999999+15:59:59"}[i] {
				t.Errorf("mode %v: row %d is (%v, %q), want (%v, %q)", mode, i+1, tm, tz, rows[i].t, rows[i].tz)
			}
		}
		if err := got.Err(); err != nil || i != len(rows) {
			t.Fatalf("mode %v: %d rows, %v", mode, i, err)
		}
		if f := got.FieldDescriptions(); f[0].DataTypeOID != 1083 || f[1].DataTypeOID != 1266 {
			t.Errorf("mode %v: column OIDs %d, %d, want 1083, 1266", mode, f[0].DataTypeOID, f[1].DataTypeOID)
		}
	}
	// timetz's binary form: int64 microseconds, int32 seconds west of UTC.
	r := conn.PgConn().ExecParams(ctx, `SELECT tz FROM tod WHERE id = 1`, nil, nil, nil, []int16{1}).Read()
	if r.Err != nil || len(r.Rows) != 1 || len(r.Rows[0][0]) != 12 {
		t.Fatalf("binary timetz: %v %v", r.Rows, r.Err)
	}
	if us, zone := int64(binary.BigEndian.Uint64(r.Rows[0][0])), int32(binary.BigEndian.Uint32(r.Rows[0][0][8:])); us != 45296789000 || zone != -7200 {
		t.Errorf("binary timetz is %d us, zone %d; want 45296789000, -7200", us, zone)
	}

	_, js := testutil.JetStream(t, srv.NATSURL())
	s, err := js.Stream(ctx, "streamdb_tods")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, "time.tods")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":3,"t":null,"tz":"23:59:59.999999+15:59:59"}`; string(msg.Data) != want {
		t.Errorf("last event %s, want %s", msg.Data, want)
	}

	compare := func() {
		t.Helper()
		for _, binary := range []bool{false, true} {
			want := query{sql: `SELECT * FROM tod ORDER BY id`}.run(ctx, pgConn.PgConn(), binary)
			for _, rel := range []string{"tod", "todv", "todsv"} {
				q := query{sql: `SELECT * FROM ` + rel + ` ORDER BY id`}
				if got := q.run(ctx, conn.PgConn(), binary); got != want {
					t.Errorf("%s (binary %v):\n got  %s\n want %s", q, binary, got, want)
				}
			}
		}
	}
	poll(t, 30*time.Second, func() error {
		if got, err := textRowsErr(ctx, conn, `SELECT count(*) FROM todsv`); err != nil || len(got) != 1 || got[0] != "3" {
			return fmt.Errorf("todsv has %v rows (%v)", got, err)
		}
		return nil
	})
	compare()
	// A view with time and timetz constants reads the same after a restart.
	const withConsts = `SELECT * FROM todc ORDER BY id`
	consts := []string{"1 t t 12:34:56.289", "2 t f 23:59:59.5", "3 NULL f NULL"}
	wantRows(t, conn, withConsts, consts...)
	srv.Restart(t)
	conn = srv.Conn(t)
	compare()
	wantRows(t, conn, withConsts, consts...)
}

// TestCurrentTimeShape: current_time, localtime and localtime(0) answer
// with PostgreSQL's type OIDs, and values of its text form and binary
// length (the values themselves change).
func TestCurrentTimeShape(t *testing.T) {
	pg := testutil.StartPostgres(t)
	srv := startServer(t)
	ctx := testutil.Context(t, time.Minute)
	digits := regexp.MustCompile(`\d`)
	fraction := regexp.MustCompile(`\.d+`)
	shape := func(s string) string { return fraction.ReplaceAllString(digits.ReplaceAllString(s, "d"), ".f") }
	for _, q := range []string{`SELECT current_time`, `SELECT localtime`, `SELECT localtime(0)`, `SELECT current_time(2)`} {
		for _, format := range []int16{0, 1} {
			var got [2]string
			for i, c := range []*pgx.Conn{srv.Conn(t), pg.Conn(t)} {
				r := c.PgConn().ExecParams(ctx, q, nil, nil, nil, []int16{format}).Read()
				if r.Err != nil {
					t.Fatalf("%s: %v", q, r.Err)
				}
				v := r.Rows[0][0]
				got[i] = fmt.Sprintf("oid %d, %d bytes", r.FieldDescriptions[0].DataTypeOID, len(v))
				if format == 0 {
					// The fraction drops trailing zeros: its length varies.
					got[i] = fmt.Sprintf("oid %d, %s", r.FieldDescriptions[0].DataTypeOID, shape(string(v)))
				}
				got[i] += ", column " + string(r.FieldDescriptions[0].Name)
			}
			if got[0] != got[1] {
				t.Errorf("%s (format %d): %s, PostgreSQL %s", q, format, got[0], got[1])
			}
		}
	}
}
