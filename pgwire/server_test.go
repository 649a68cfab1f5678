package pgwire_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

var queryModes = []struct {
	name string
	mode pgx.QueryExecMode
}{
	{"simple", pgx.QueryExecModeSimpleProtocol},
	{"extended", pgx.QueryExecModeCacheStatement},
	{"exec", pgx.QueryExecModeExec},
}

func TestStartupParameters(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	pc := conn.PgConn()
	for name, want := range map[string]string{
		"server_version":              "15.0",
		"server_encoding":             "UTF8",
		"client_encoding":             "UTF8",
		"DateStyle":                   "ISO, MDY",
		"integer_datetimes":           "on",
		"standard_conforming_strings": "on",
		"TimeZone":                    "UTC",
		"IntervalStyle":               "postgres",
		"is_superuser":                "on",
		"application_name":            "pgwire_test",
	} {
		if got := pc.ParameterStatus(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if pc.PID() == 0 || len(pc.SecretKey()) != 4 {
		t.Errorf("bad BackendKeyData: pid %d, secret %x", pc.PID(), pc.SecretKey())
	}
	if pc.TxStatus() != 'I' {
		t.Errorf("TxStatus = %c", pc.TxStatus())
	}
}

func TestSSLRequestDeclined(t *testing.T) {
	ts := startServer(t)
	// sslmode=prefer: the server answers 'N' and pgx carries on in the clear.
	cfg, err := pgx.ParseConfig(strings.Replace(ts.connString(), "sslmode=disable", "sslmode=prefer", 1))
	if err != nil {
		t.Fatal(err)
	}
	conn := ts.connectConfig(t, cfg)
	var n int32
	if err := conn.QueryRow(testContext(t), "select 7").Scan(&n); err != nil || n != 7 {
		t.Fatalf("got %d, %v", n, err)
	}

	// Raw: SSLRequest, then GSSEncRequest, then the real startup.
	rc := ts.dialRaw(t)
	for _, req := range []pgproto3.FrontendMessage{&pgproto3.SSLRequest{}, &pgproto3.GSSEncRequest{}} {
		rc.send(req)
		b := make([]byte, 1)
		if _, err := rc.nc.Read(b); err != nil || b[0] != 'N' {
			t.Fatalf("answer to %T: %q, %v", req, b, err)
		}
	}
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "x"}})
	expect[*pgproto3.AuthenticationOk](rc)
}

func TestStartupErrors(t *testing.T) {
	ts := startServer(t)
	cfg, _ := pgx.ParseConfig(strings.Replace(ts.connString(), "tester@", "nobody@", 1))
	_, err := pgx.ConnectConfig(testContext(t), cfg)
	if pgCode(err) != "28000" {
		t.Fatalf("got %v, want 28000", err)
	}

	rc := ts.dialRaw(t)
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"database": "db"}})
	expectError(rc, "FATAL", "28000")
	rc.expectClosed()
}

func TestProtocol32Negotiated(t *testing.T) {
	ts := startServer(t)
	rc := ts.dialRaw(t)
	rc.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
		Parameters: map[string]string{"user": "x", "_pq_.foo": "1"}})
	npv := expect[*pgproto3.NegotiateProtocolVersion](rc)
	if npv.NewestMinorProtocol != 0 || len(npv.UnrecognizedOptions) != 1 || npv.UnrecognizedOptions[0] != "_pq_.foo" {
		t.Fatalf("got %+v", npv)
	}
	expect[*pgproto3.AuthenticationOk](rc)

	// pgx asking for protocol 3.2 settles for 3.0.
	cfg, err := pgx.ParseConfig(ts.connString() + "&max_protocol_version=latest")
	if err != nil {
		t.Fatal(err)
	}
	var n int32
	if err := ts.connectConfig(t, cfg).QueryRow(testContext(t), "select 32").Scan(&n); err != nil || n != 32 {
		t.Fatalf("got %d, %v", n, err)
	}
}

// TestManyRows streams more rows than fit in the write buffer.
func TestManyRows(t *testing.T) {
	ts := startServer(t)
	for _, m := range queryModes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			rows, err := conn.Query(testContext(t), "series 100000")
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			for rows.Next() {
				want++
				var got int64
				if err := rows.Scan(&got); err != nil || got != want {
					t.Fatalf("row %d: got %d, %v", want, got, err)
				}
			}
			if rows.Err() != nil || want != 100000 {
				t.Fatalf("%d rows, %v", want, rows.Err())
			}
		})
	}
}

func TestSelect(t *testing.T) {
	ts := startServer(t)
	for _, m := range queryModes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			var n int32
			if err := conn.QueryRow(testContext(t), "select 42").Scan(&n); err != nil || n != 42 {
				t.Fatalf("got %d, %v", n, err)
			}
		})
	}
}

func TestSimpleMultipleStatements(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	results, err := conn.PgConn().Exec(testContext(t), "select 1; insert; select 2;").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("got %d results", len(results))
	}
	if got := string(results[0].Rows[0][0]); got != "1" {
		t.Errorf("first result %q", got)
	}
	if got := results[1].CommandTag.String(); got != "INSERT 0 1" || results[1].FieldDescriptions != nil {
		t.Errorf("second result %q, fields %v", got, results[1].FieldDescriptions)
	}
	if got := string(results[2].Rows[0][0]); got != "2" || results[2].FieldDescriptions[0].DataTypeOID != pgtype.Int4OID {
		t.Errorf("third result %q %+v", got, results[2].FieldDescriptions)
	}
}

func TestSimpleErrorStopsRest(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ts.eng.takeExecuted()
	_, err := conn.PgConn().Exec(testContext(t), "insert; fail; insert").ReadAll()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v", err)
	}
	// The fake reports position 3 in "fail", which starts at character 9.
	if pe.Code != "22012" || pe.Severity != "ERROR" || pe.Message != "division by zero" ||
		pe.Detail != "some detail" || pe.Hint != "some hint" || pe.Position != 11 {
		t.Errorf("got %+v", pe)
	}
	if got := ts.eng.takeExecuted(); strings.Join(got, ",") != "insert,fail" {
		t.Errorf("executed %q", got)
	}
	// Position is shifted by characters, not bytes.
	_, err = conn.PgConn().Exec(testContext(t), "select 1; /*é*/ bad").ReadAll()
	if !errors.As(err, &pe) || pe.Code != "42601" || pe.Position != 11 {
		t.Errorf("got %+v", pe)
	}
	// The connection is still usable.
	var n int32
	if err := conn.QueryRow(testContext(t), "select 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("got %d, %v", n, err)
	}
}

func TestEmptyQuery(t *testing.T) {
	ts := startServer(t)
	rc, _ := ts.rawConnect(t)
	for _, q := range []string{"", " ; ; "} {
		rc.send(&pgproto3.Query{String: q})
		expect[*pgproto3.EmptyQueryResponse](rc)
		expect[*pgproto3.ReadyForQuery](rc)
	}
	// Extended: an empty statement describes as NoData and executes as
	// EmptyQueryResponse.
	rc.send(&pgproto3.Parse{}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.BindComplete](rc)
	expect[*pgproto3.NoData](rc)
	expect[*pgproto3.EmptyQueryResponse](rc)
	expect[*pgproto3.ReadyForQuery](rc)
}

func TestTxStatus(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	ctx := testContext(t)
	pc := conn.PgConn()
	steps := []struct {
		sql  string
		want byte
	}{{"begin", 'T'}, {"fail", 'E'}, {"insert", 'E'}, {"commit", 'I'}}
	for _, s := range steps {
		pc.Exec(ctx, s.sql).ReadAll()
		if got := pc.TxStatus(); got != s.want {
			t.Errorf("after %s: TxStatus %c, want %c", s.sql, got, s.want)
		}
	}
}

// allTypesWant is what pgx must decode from the first alltypes row.
type allTypesRow struct {
	b    bool
	i2   int16
	i4   int32
	i8   int64
	f4   float32
	f8   float64
	num  pgtype.Numeric
	txt  string
	vc   string
	d    time.Time
	ts   time.Time
	tstz time.Time
	iv   pgtype.Interval
}

func (r *allTypesRow) targets() []any {
	return []any{&r.b, &r.i2, &r.i4, &r.i8, &r.f4, &r.f8, &r.num, &r.txt, &r.vc, &r.d, &r.ts, &r.tstz, &r.iv}
}

func TestAllTypes(t *testing.T) {
	ts := startServer(t)
	for _, m := range queryModes {
		t.Run(m.name, func(t *testing.T) {
			conn := ts.connect(t, m.mode)
			rows, err := conn.Query(testContext(t), "alltypes")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			fds := rows.FieldDescriptions()
			for i, col := range allTypesColumns {
				fd := fds[i]
				if fd.Name != col.Name || fd.DataTypeOID != col.Type.OID() || fd.DataTypeSize != col.Type.Size() || fd.TypeModifier != -1 {
					t.Errorf("column %d: %+v", i, fd)
				}
				// pgx asks for binary results in its statement-cache mode,
				// except for strings.
				wantFormat := int16(0)
				if m.mode == pgx.QueryExecModeCacheStatement && !col.Type.IsString() {
					wantFormat = 1
				}
				if fd.Format != wantFormat {
					t.Errorf("column %s format %d, want %d", col.Name, fd.Format, wantFormat)
				}
			}

			if !rows.Next() {
				t.Fatalf("no first row: %v", rows.Err())
			}
			var r allTypesRow
			if err := rows.Scan(r.targets()...); err != nil {
				t.Fatal(err)
			}
			checkAllTypesRow(t, &r)

			if !rows.Next() {
				t.Fatalf("no second row: %v", rows.Err())
			}
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if v != nil {
					t.Errorf("column %d: got %v, want NULL", i, v)
				}
			}
			if rows.Next() {
				t.Fatal("extra row")
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if tag := rows.CommandTag().String(); tag != "SELECT 2" {
				t.Errorf("tag %q", tag)
			}
		})
	}
}

func checkAllTypesRow(t *testing.T, r *allTypesRow) {
	t.Helper()
	if !r.b || r.i2 != -12345 || r.i4 != 123456789 || r.i8 != -9_000_000_000_000_001 || r.f4 != 1.5 || r.f8 != 3.141592653589793 {
		t.Errorf("numbers: %+v", r)
	}
	if r.num.Int == nil || r.num.Int.Cmp(big.NewInt(-12345678900)) != 0 || r.num.Exp != -6 {
		t.Errorf("numeric: %v e%d", r.num.Int, r.num.Exp)
	}
	if r.txt != "héllo wörld" || r.vc != "varchar" {
		t.Errorf("strings: %q %q", r.txt, r.vc)
	}
	if want := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC); !r.d.Equal(want) {
		t.Errorf("date: %v", r.d)
	}
	if !r.ts.Equal(testTime) || !r.tstz.Equal(testTime) {
		t.Errorf("timestamps: %v %v", r.ts, r.tstz)
	}
	if r.iv.Months != 14 || r.iv.Days != 3 || r.iv.Microseconds != testInterval.I {
		t.Errorf("interval: %+v", r.iv)
	}
}
