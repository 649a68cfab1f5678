package props

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/tests/testutil"
)

// Environment variables that replay and size a run.
const (
	envSeed  = "STREAMDB_PROP_SEED"
	envCases = "STREAMDB_PROP_CASES"
)

// defaultSeed is the seed of a run that names none, so that go test (and
// CI) tests the same cases every time; $STREAMDB_PROP_SEED=random (as
// make props sets it) draws one from the clock.
const defaultSeed = 1

// propRand returns the run's random source, seeded from $STREAMDB_PROP_SEED
// (a number, or "random" for the clock) or defaultSeed, and logs the seed
// so that a failure can be replayed.
func propRand(t *testing.T) *rand.Rand {
	t.Helper()
	seed := uint64(defaultSeed)
	if s := os.Getenv(envSeed); s == "random" {
		seed = uint64(time.Now().UnixNano())
	} else if s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("$%s=%q is not a seed: %v", envSeed, s, err)
		}
		seed = v
	}
	t.Logf("seed %d (replay: %s=%d go test ./tests/props -run '^%s$')", seed, envSeed, seed, t.Name())
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// propCases returns $STREAMDB_PROP_CASES, or def for a short run.
func propCases(t *testing.T, def int) int {
	t.Helper()
	if s := os.Getenv(envCases); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("$%s=%q is not a positive number", envCases, s)
		}
		return n
	}
	return def
}

// pair is a streamdb server and a PostgreSQL 15 server given the same
// statements.
type pair struct {
	t   *testing.T
	ctx context.Context
	sdb *pgx.Conn
	pg  *pgx.Conn
}

func startPair(t *testing.T, timeout time.Duration) *pair {
	t.Helper()
	pg := testutil.StartPostgres(t)
	srv := testutil.StartServer(t, testutil.ServerOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return &pair{t: t, ctx: ctx, sdb: srv.Conn(t), pg: pg.Conn(t)}
}

// both runs setup statements on both servers; either failing fails the test.
func (p *pair) both(sqls ...string) {
	p.t.Helper()
	for _, sql := range sqls {
		for _, c := range []*pgx.Conn{p.sdb, p.pg} {
			if _, err := c.Exec(p.ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
				p.t.Fatalf("%s: %v", sql, err)
			}
		}
	}
}

// outcome is what a statement returned: an SQLSTATE, or rows.
type outcome struct {
	code string // SQLSTATE when the statement failed
	msg  string // the error message, for reports only
	oids []uint32
	rows [][][]byte // nil entries are SQL NULL
}

// String renders an outcome for a failure report.
func (o outcome) String() string {
	if o.code != "" {
		return fmt.Sprintf("ERROR %s (%s)", o.code, o.msg)
	}
	var b strings.Builder
	for i, r := range o.rows {
		if i > 0 {
			b.WriteString("; ")
		}
		for j, v := range r {
			if j > 0 {
				b.WriteString(" | ")
			}
			if v == nil {
				b.WriteString("NULL")
			} else if len(v) > 200 {
				fmt.Fprintf(&b, "%s... (%d bytes)", strconv.Quote(string(v[:200])), len(v))
			} else {
				b.WriteString(strconv.Quote(string(v)))
			}
		}
	}
	return fmt.Sprintf("oids %v rows [%s]", o.oids, b.String())
}

// sameAs reports whether o and want agree: both failed with the same
// SQLSTATE, or both returned the same column types and bytes.
func (o outcome) sameAs(want outcome) bool {
	if o.code != "" || want.code != "" {
		return o.code == want.code
	}
	if fmt.Sprint(o.oids) != fmt.Sprint(want.oids) || len(o.rows) != len(want.rows) {
		return false
	}
	for i := range o.rows {
		if len(o.rows[i]) != len(want.rows[i]) {
			return false
		}
		for j := range o.rows[i] {
			a, b := o.rows[i][j], want.rows[i][j]
			if (a == nil) != (b == nil) || string(a) != string(b) {
				return false
			}
		}
	}
	return true
}

// fromResult turns a pgconn result (or the error reading it) into an
// outcome. An error that is not a server error fails the test: the
// connection broke.
func fromResult(t *testing.T, sql string, r *pgconn.Result, err error) outcome {
	t.Helper()
	if err == nil && r != nil {
		err = r.Err
	}
	if err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v", sql, err)
		}
		return outcome{code: pe.Code, msg: pe.Message}
	}
	var o outcome
	for _, fd := range r.FieldDescriptions {
		o.oids = append(o.oids, fd.DataTypeOID)
	}
	for _, raw := range r.Rows {
		row := make([][]byte, len(raw))
		for i, v := range raw {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		o.rows = append(o.rows, row)
	}
	return o
}

// simple runs one statement with the simple protocol: values come back in
// the text format.
func simple(t *testing.T, ctx context.Context, c *pgx.Conn, sql string) outcome {
	t.Helper()
	results, err := c.PgConn().Exec(ctx, sql).ReadAll()
	if err == nil && len(results) != 1 {
		t.Fatalf("%s: %d results, want 1", sql, len(results))
	}
	var r *pgconn.Result
	if len(results) > 0 {
		r = results[0]
	}
	return fromResult(t, sql, r, err)
}

// param is one parameter of an extended-protocol statement.
type param struct {
	oid    uint32
	binary bool
	value  []byte // nil is NULL
}

// extended runs one statement with the extended protocol, the given
// parameters, and every result column in the binary format (as pgx's
// QueryExecModeExec asks for the types it knows) or all in text.
func extended(t *testing.T, ctx context.Context, c *pgx.Conn, sql string, binaryResults bool, params ...param) outcome {
	t.Helper()
	var values [][]byte
	var oids []uint32
	var formats []int16
	for _, p := range params {
		values = append(values, p.value)
		oids = append(oids, p.oid)
		formats = append(formats, format(p.binary))
	}
	r := c.PgConn().ExecParams(ctx, sql, values, oids, formats, []int16{format(binaryResults)}).Read()
	return fromResult(t, sql, r, nil)
}

func format(binary bool) int16 {
	if binary {
		return 1
	}
	return 0
}
