package e2e

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// timestampEdges are values at and past both ends of PostgreSQL's
// timestamp and date ranges (4714-11-24 BC to 294276-12-31
// 23:59:59.999999, dates to 5874897-12-31), with the years 294247 to
// 294276 that microseconds since 1970 cannot hold.
var timestampEdges = []struct{ text, typ string }{
	{"294276-12-31 23:59:59.999999", "timestamp"},
	{"294276-12-31 23:59:59.999999+00", "timestamptz"},
	{"294247-01-01 00:00:00", "timestamp"},
	{"294246-12-31 23:59:59.999999+00", "timestamptz"},
	{"294250-06-15 12:34:56.789012+00", "timestamptz"},
	{"4714-11-24 00:00:00 BC", "timestamp"},
	{"4714-11-24 00:00:00+00 BC", "timestamptz"},
	{"2000-01-01 00:00:00", "timestamp"},
	{"1970-01-01 00:00:00+00", "timestamptz"},
	{"infinity", "timestamp"},
	{"-infinity", "timestamptz"},
	{"5874897-12-31", "date"},
	{"294276-12-31", "date"},
	{"4714-11-24 BC", "date"},
}

// binaryResult runs sql with every parameter and result in the binary
// format and returns the result's values in hex, or the error's SQLSTATE.
func binaryResult(conn *pgx.Conn, sql string, params [][]byte) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	formats := make([]int16, len(params))
	for i := range formats {
		formats[i] = 1
	}
	res := conn.PgConn().ExecParams(ctx, sql, params, nil, formats, []int16{1}).Read()
	if res.Err != nil {
		if pe, ok := res.Err.(*pgconn.PgError); ok {
			return "error " + pe.Code
		}
		return "error " + res.Err.Error()
	}
	out := ""
	for _, row := range res.Rows {
		for _, v := range row {
			out += hex.EncodeToString(v) + " "
		}
	}
	return out
}

// TestTimestampRangeEndsBinary: the binary wire format of timestamps,
// timestamptz and dates at both ends of PostgreSQL's range is
// PostgreSQL's, as results and as parameters (a parameter past the range
// is 22008 on both), and pgx reads the same times from both servers.
func TestTimestampRangeEndsBinary(t *testing.T) {
	pg := testutil.StartPostgres(t).Conn(t)
	conn := startServer(t).Conn(t)
	for _, e := range timestampEdges {
		lit := fmt.Sprintf("SELECT '%s'::%s", e.text, e.typ)
		want := binaryResult(pg, lit, nil)
		if got := binaryResult(conn, lit, nil); got != want {
			t.Errorf("%s: binary result %s, PostgreSQL's %s", lit, got, want)
		}
		// The same bytes sent back as a parameter.
		raw, err := hex.DecodeString(want[:len(want)-1])
		if err != nil {
			t.Fatalf("%s: %q", lit, want)
		}
		param := fmt.Sprintf("SELECT $1::%s, $1::%s::text", e.typ, e.typ)
		want = binaryResult(pg, param, [][]byte{raw})
		if got := binaryResult(conn, param, [][]byte{raw}); got != want {
			t.Errorf("%s with %s: %s, PostgreSQL's %s", param, e.text, got, want)
		}
		var wantV, gotV any
		if err := pg.QueryRow(context.Background(), lit).Scan(&wantV); err != nil {
			t.Fatalf("PostgreSQL: %s: %v", lit, err)
		}
		if err := conn.QueryRow(context.Background(), lit).Scan(&gotV); err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		if fmt.Sprint(gotV) != fmt.Sprint(wantV) {
			t.Errorf("%s: pgx reads %v, from PostgreSQL %v", lit, gotV, wantV)
		}
	}
	// Binary timestamps one past each end, and int64's extremes short of
	// the infinities.
	for _, us := range []int64{9223371331200000000, -211813488000000001, 9223372036854775806, -9223372036854775807} {
		raw := binary.BigEndian.AppendUint64(nil, uint64(us))
		for _, typ := range []string{"timestamp", "timestamptz"} {
			sql := fmt.Sprintf("SELECT $1::%s", typ)
			want := binaryResult(pg, sql, [][]byte{raw})
			if want != "error 22008" {
				t.Fatalf("PostgreSQL: %s with %d: %s", sql, us, want)
			}
			if got := binaryResult(conn, sql, [][]byte{raw}); got != want {
				t.Errorf("%s with %d: %s, PostgreSQL's %s", sql, us, got, want)
			}
		}
	}
}
