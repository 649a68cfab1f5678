package pgwire_test

import (
	"bytes"
	"encoding/binary"
	"math/big"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

func TestDescribeStatement(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	pc := conn.PgConn()
	ctx := testContext(t)

	sd, err := pc.Prepare(ctx, "s1", "echo $1::int8 $2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !equalOIDs(sd.ParamOIDs, pgtype.Int8OID, pgtype.TextOID) {
		t.Errorf("param OIDs %v", sd.ParamOIDs)
	}
	if len(sd.Fields) != 2 || sd.Fields[0].Name != "p1" || sd.Fields[0].DataTypeOID != pgtype.Int8OID || sd.Fields[1].DataTypeOID != pgtype.TextOID {
		t.Errorf("fields %+v", sd.Fields)
	}

	// Declared types win, and declared but unused parameters are kept.
	sd, err = pc.Prepare(ctx, "s2", "echo $1", []uint32{pgtype.NumericOID, pgtype.BoolOID})
	if err != nil {
		t.Fatal(err)
	}
	if !equalOIDs(sd.ParamOIDs, pgtype.NumericOID, pgtype.BoolOID) {
		t.Errorf("param OIDs %v", sd.ParamOIDs)
	}
	res := pc.ExecPrepared(ctx, "s2", [][]byte{[]byte("1.50"), []byte("t")}, nil, nil).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "1.50" {
		t.Fatalf("got %q, %v", res.Rows, res.Err)
	}

	// A statement without result columns describes as NoData.
	sd, err = pc.Prepare(ctx, "s3", "insert", nil)
	if err != nil || sd.Fields != nil || len(sd.ParamOIDs) != 0 {
		t.Fatalf("got %+v, %v", sd, err)
	}

	_, err = pc.Prepare(ctx, "s4", "echo $1", []uint32{600}) // point
	if pgCode(err) != "0A000" {
		t.Fatalf("unsupported OID: got %v", err)
	}
	_, err = pc.Prepare(ctx, "s5", "select 1; select 2", nil)
	if pgCode(err) != "42601" {
		t.Fatalf("two statements: got %v", err)
	}
	if _, err := pc.Prepare(ctx, "s1", "select 1", nil); pgCode(err) != "42P05" {
		t.Fatalf("duplicate name: got %v", err)
	}
}

func equalOIDs(got []uint32, want ...uint32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func mustNumeric(s string) pgtype.Numeric {
	var n pgtype.Numeric
	if err := n.Scan(s); err != nil {
		panic(err)
	}
	return n
}

// TestParamsRoundTrip sends every type as a parameter in text and binary
// format and reads it back in both formats.
func TestParamsRoundTrip(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	pc := conn.PgConn()
	m := pgtype.NewMap()

	cases := []struct {
		name  string
		oid   uint32
		value any    // encoded by pgx in binary, unless bin is set
		text  string // canonical text form
		bin   []byte // canonical binary form, as PostgreSQL writes it
	}{
		{"bool", pgtype.BoolOID, true, "t", nil},
		{"int2", pgtype.Int2OID, int16(-7), "-7", nil},
		{"int4", pgtype.Int4OID, int32(1 << 30), "1073741824", nil},
		{"int8", pgtype.Int8OID, int64(-1 << 62), "-4611686018427387904", nil},
		{"float4", pgtype.Float4OID, float32(2.5), "2.5", nil},
		{"float8", pgtype.Float8OID, -1.25e-300, "-1.25e-300", nil},
		{"numeric", pgtype.NumericOID, mustNumeric("123.4500"), "123.4500", nil},
		{"numeric small", pgtype.NumericOID, mustNumeric("-0.0001"), "-0.0001", nil},
		{"numeric big", pgtype.NumericOID, mustNumeric("100000000000000000000"), "100000000000000000000", nil},
		{"numeric trailing zeros", pgtype.NumericOID, nil, "1.00000000", []byte{0, 1, 0, 0, 0, 0, 0, 8, 0, 1}},
		{"numeric zero", pgtype.NumericOID, nil, "0.00", []byte{0, 0, 0, 0, 0, 0, 0, 2}},
		{"numeric groups", pgtype.NumericOID, nil, "-12345678.9", []byte{0, 3, 0, 1, 0x40, 0, 0, 1, 0x04, 0xd2, 0x16, 0x2e, 0x23, 0x28}},
		{"numeric NaN", pgtype.NumericOID, pgtype.Numeric{NaN: true, Valid: true}, "NaN", nil},
		{"text", pgtype.TextOID, "ünïcode 'quoted'", "ünïcode 'quoted'", nil},
		{"varchar", pgtype.VarcharOID, "v", "v", nil},
		{"date", pgtype.DateOID, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), "1999-12-31", nil},
		{"timestamp", pgtype.TimestampOID, time.Date(1969, 7, 20, 20, 17, 40, 123456000, time.UTC), "1969-07-20 20:17:40.123456", nil},
		{"timestamptz", pgtype.TimestamptzOID, time.Date(2038, 1, 19, 3, 14, 8, 0, time.UTC), "2038-01-19 03:14:08+00", nil},
		{"interval", pgtype.IntervalOID, pgtype.Interval{Months: 14, Days: 3, Microseconds: 14706500000, Valid: true}, "1 year 2 mons 3 days 04:05:06.5", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := c.bin
			if bin == nil {
				var err error
				if bin, err = m.Encode(c.oid, pgtype.BinaryFormatCode, c.value, nil); err != nil {
					t.Fatal(err)
				}
			}
			forms := [][]byte{[]byte(c.text), bin}
			for inFormat, in := range forms {
				for outFormat, want := range forms {
					res := pc.ExecParams(testContext(t), "echo $1", [][]byte{in}, []uint32{c.oid},
						[]int16{int16(inFormat)}, []int16{int16(outFormat)}).Read()
					if res.Err != nil {
						t.Fatalf("in %d out %d: %v", inFormat, outFormat, res.Err)
					}
					if got := res.Rows[0][0]; !bytes.Equal(got, want) {
						t.Errorf("in %d out %d: got %q, want %q", inFormat, outFormat, got, want)
					}
					if res.FieldDescriptions[0].DataTypeOID != c.oid || res.FieldDescriptions[0].Format != int16(outFormat) {
						t.Errorf("field %+v", res.FieldDescriptions[0])
					}
				}
			}
		})
	}

	// NULL, and per-parameter format codes.
	res := pc.ExecParams(testContext(t), "echo $1::int4 $2::int8 $3", [][]byte{nil, {0, 0, 0, 0, 0, 0, 0, 9}, []byte("x")},
		nil, []int16{0, 1, 0}, []int16{1}).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if r := res.Rows[0]; r[0] != nil || binary.BigEndian.Uint64(r[1]) != 9 || string(r[2]) != "x" {
		t.Errorf("got %q", r)
	}
}

func TestParamsTypedPgx(t *testing.T) {
	ts := startServer(t)
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec} {
		conn := ts.connect(t, mode)
		num := mustNumeric("-98765.4321")
		iv := pgtype.Interval{Months: 1, Days: -2, Microseconds: 3, Valid: true}
		day := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		var (
			i8     int64
			gotNum pgtype.Numeric
			tstz   time.Time
			gotIv  pgtype.Interval
			b      bool
			f4     float32
			d      time.Time
			s      string
		)
		err := conn.QueryRow(testContext(t), "echo $1::int8 $2::numeric $3::timestamptz $4::interval $5::bool $6::float4 $7::date $8",
			int64(-5), num, testTime, iv, true, float32(-0.25), day, "str").
			Scan(&i8, &gotNum, &tstz, &gotIv, &b, &f4, &d, &s)
		if err != nil {
			t.Fatal(err)
		}
		if i8 != -5 || gotNum.Int.Cmp(big.NewInt(-987654321)) != 0 || gotNum.Exp != -4 || !tstz.Equal(testTime) ||
			gotIv != iv || !b || f4 != -0.25 || !d.Equal(day) || s != "str" {
			t.Errorf("mode %v: got %v %v/%d %v %+v %v %v %v %q", mode, i8, gotNum.Int, gotNum.Exp, tstz, gotIv, b, f4, d, s)
		}
	}
}

func TestBindErrors(t *testing.T) {
	ts := startServer(t)
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	pc := conn.PgConn()
	ctx := testContext(t)
	if _, err := pc.Prepare(ctx, "s", "echo $1::int4", nil); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		res  *pgconnResult
		code string
	}{
		{"wrong count", read(pc.ExecPrepared(ctx, "s", nil, nil, nil)), "08P01"},
		{"bad text", read(pc.ExecPrepared(ctx, "s", [][]byte{[]byte("abc")}, nil, nil)), "22P02"},
		{"out of range", read(pc.ExecPrepared(ctx, "s", [][]byte{[]byte("99999999999")}, nil, nil)), "22003"},
		{"bad binary", read(pc.ExecPrepared(ctx, "s", [][]byte{{1, 2, 3}}, []int16{1}, nil)), "22P03"},
		{"bad utf8", read(pc.ExecParams(ctx, "echo $1", [][]byte{{0xff}}, []uint32{pgtype.TextOID}, nil, nil)), "22021"},
		{"bad format code", read(pc.ExecPrepared(ctx, "s", [][]byte{[]byte("1")}, []int16{2}, nil)), "22023"},
		{"result formats", read(pc.ExecPrepared(ctx, "s", [][]byte{[]byte("1")}, nil, []int16{0, 1})), "08P01"},
		{"no statement", read(pc.ExecPrepared(ctx, "nope", nil, nil, nil)), "26000"},
	}
	for _, c := range checks {
		if got := pgCode(c.res.Err); got != c.code {
			t.Errorf("%s: got %v, want %s", c.name, c.res.Err, c.code)
		}
	}
	// None of these is fatal.
	res := pc.ExecPrepared(ctx, "s", [][]byte{[]byte("12")}, nil, nil).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "12" {
		t.Fatalf("got %q, %v", res.Rows, res.Err)
	}
}

func TestPortalSuspended(t *testing.T) {
	ts := startServer(t)
	rc, _ := ts.rawConnect(t)
	rc.send(
		&pgproto3.Parse{Query: "series 5"},
		&pgproto3.Bind{ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Sync{},
	)
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.BindComplete](rc)
	next := uint64(1)
	for _, batch := range []int{2, 2, 1} {
		for range batch {
			row := expect[*pgproto3.DataRow](rc)
			if got := binary.BigEndian.Uint64(row.Values[0]); got != next {
				t.Fatalf("row %d: got %d", next, got)
			}
			next++
		}
		if batch == 2 {
			expect[*pgproto3.PortalSuspended](rc)
		}
	}
	if cc := expect[*pgproto3.CommandComplete](rc); string(cc.CommandTag) != "SELECT 5" {
		t.Errorf("tag %q", cc.CommandTag)
	}
	if rfq := expect[*pgproto3.ReadyForQuery](rc); rfq.TxStatus != 'I' {
		t.Errorf("TxStatus %c", rfq.TxStatus)
	}
}

// TestPortalLifetime checks that named portals survive Sync inside a
// transaction block and are dropped when it ends.
func TestPortalLifetime(t *testing.T) {
	ts := startServer(t)
	rc, _ := ts.rawConnect(t)
	rc.send(&pgproto3.Query{String: "begin"})
	expect[*pgproto3.CommandComplete](rc)
	expect[*pgproto3.ReadyForQuery](rc)

	rc.send(
		&pgproto3.Parse{Name: "s", Query: "series 3"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Describe{ObjectType: 'P', Name: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 1},
		&pgproto3.Sync{},
	)
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.BindComplete](rc)
	if rd := expect[*pgproto3.RowDescription](rc); rd.Fields[0].Format != 0 || rd.Fields[0].DataTypeOID != pgtype.Int8OID {
		t.Errorf("row description %+v", rd.Fields)
	}
	if row := expect[*pgproto3.DataRow](rc); string(row.Values[0]) != "1" {
		t.Errorf("row %q", row.Values)
	}
	expect[*pgproto3.PortalSuspended](rc)
	if rfq := expect[*pgproto3.ReadyForQuery](rc); rfq.TxStatus != 'T' {
		t.Fatalf("TxStatus %c", rfq.TxStatus)
	}

	rc.send(&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	expect[*pgproto3.DataRow](rc)
	expect[*pgproto3.DataRow](rc)
	expect[*pgproto3.CommandComplete](rc)
	expect[*pgproto3.ReadyForQuery](rc)

	rc.send(&pgproto3.Query{String: "commit"})
	expect[*pgproto3.CommandComplete](rc)
	expect[*pgproto3.ReadyForQuery](rc)
	rc.send(&pgproto3.Sync{}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	expect[*pgproto3.ReadyForQuery](rc)
	expectError(rc, "ERROR", "34000")
	expect[*pgproto3.ReadyForQuery](rc)
}

func TestExtendedErrorSkipsUntilSync(t *testing.T) {
	ts := startServer(t)
	rc, _ := ts.rawConnect(t)
	rc.send(
		&pgproto3.Parse{Query: "bad"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Query{String: "insert"}, // skipped too
		&pgproto3.Sync{},
		&pgproto3.Query{String: "select 3"},
	)
	if e := expectError(rc, "ERROR", "42601"); e.Position != 1 {
		t.Errorf("position %d", e.Position)
	}
	expect[*pgproto3.ReadyForQuery](rc)
	expect[*pgproto3.RowDescription](rc)
	if row := expect[*pgproto3.DataRow](rc); string(row.Values[0]) != "3" {
		t.Errorf("row %q", row.Values)
	}
	expect[*pgproto3.CommandComplete](rc)
	expect[*pgproto3.ReadyForQuery](rc)

	// An execution error mid-batch skips the rest of the batch too.
	ts.eng.takeExecuted()
	rc.send(
		&pgproto3.Parse{Query: "fail"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "insert"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.BindComplete](rc)
	expectError(rc, "ERROR", "22012")
	expect[*pgproto3.ReadyForQuery](rc)
	if got := ts.eng.takeExecuted(); len(got) != 1 || got[0] != "fail" {
		t.Errorf("executed %q", got)
	}
}

func TestNamedObjects(t *testing.T) {
	ts := startServer(t)
	rc, _ := ts.rawConnect(t)
	rc.send(
		&pgproto3.Parse{Name: "s", Query: "select 1"},
		&pgproto3.Close{ObjectType: 'S', Name: "s"},
		&pgproto3.Close{ObjectType: 'S', Name: "never existed"},
		&pgproto3.Parse{Name: "s", Query: "select 2"},
		&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s", ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Describe{ObjectType: 'P', Name: "p"},
		&pgproto3.Execute{Portal: "p"},
		&pgproto3.Close{ObjectType: 'P', Name: "p"},
		&pgproto3.Flush{},
	)
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.CloseComplete](rc)
	expect[*pgproto3.CloseComplete](rc)
	expect[*pgproto3.ParseComplete](rc)
	expect[*pgproto3.BindComplete](rc)
	if pd := expect[*pgproto3.ParameterDescription](rc); len(pd.ParameterOIDs) != 0 {
		t.Errorf("parameters %v", pd.ParameterOIDs)
	}
	if rd := expect[*pgproto3.RowDescription](rc); rd.Fields[0].Format != 0 {
		t.Errorf("statement row description %+v", rd.Fields)
	}
	if rd := expect[*pgproto3.RowDescription](rc); rd.Fields[0].Format != 1 {
		t.Errorf("portal row description %+v", rd.Fields)
	}
	if row := expect[*pgproto3.DataRow](rc); !bytes.Equal(row.Values[0], []byte{0, 0, 0, 2}) {
		t.Errorf("row %v", row.Values)
	}
	expect[*pgproto3.CommandComplete](rc)
	expect[*pgproto3.CloseComplete](rc) // Flush sent everything without Sync

	rc.send(&pgproto3.Bind{DestinationPortal: "q", PreparedStatement: "s"},
		&pgproto3.Bind{DestinationPortal: "q", PreparedStatement: "s"}, &pgproto3.Sync{})
	expect[*pgproto3.BindComplete](rc)
	expectError(rc, "ERROR", "42P03")
	expect[*pgproto3.ReadyForQuery](rc)

	rc.send(&pgproto3.Describe{ObjectType: 'S', Name: "nope"}, &pgproto3.Sync{})
	expectError(rc, "ERROR", "26000")
	expect[*pgproto3.ReadyForQuery](rc)
}
