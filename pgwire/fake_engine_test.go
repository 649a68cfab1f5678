package pgwire_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"

	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// fakeEngine understands a handful of statements:
//
//	select N        one int4 column, one row
//	echo $1 $2::t   one column per parameter, one row with the parameters
//	alltypes        one column of every type; a row of values, a row of NULLs
//	series N        N rows of int8 1..N
//	insert          no rows, tag INSERT 0 1
//	fail            Execute fails with SQLSTATE 22012
//	bad...          Prepare fails with a syntax error
//	sleep           blocks until its context is cancelled
//	panic           Execute panics
//	begin / commit  transaction status
type fakeEngine struct {
	started chan string // receives "sleep" when a sleep begins

	mu       sync.Mutex
	executed []string
	open     int // sessions not yet closed
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{started: make(chan string, 16)}
}

func (e *fakeEngine) NewSession(ctx context.Context, params map[string]string) (pgwire.Session, error) {
	if params["user"] == "nobody" {
		return nil, sqlerr.New("28000", "role \"nobody\" does not exist")
	}
	e.mu.Lock()
	e.open++
	e.mu.Unlock()
	return &fakeSession{e: e}, nil
}

func (e *fakeEngine) openSessions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open
}

func (e *fakeEngine) takeExecuted() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := e.executed
	e.executed = nil
	return out
}

type fakeSession struct {
	e      *fakeEngine
	tx     bool
	failed bool
	closed bool
}

func (s *fakeSession) Split(sql string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(sql, ";") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out, nil
}

func (s *fakeSession) TxStatus() byte {
	switch {
	case s.failed:
		return 'E'
	case s.tx:
		return 'T'
	}
	return 'I'
}

func (s *fakeSession) Close() {
	if s.closed {
		panic("session closed twice")
	}
	s.closed = true
	s.e.mu.Lock()
	s.e.open--
	s.e.mu.Unlock()
}

func (s *fakeSession) Prepare(ctx context.Context, sql string, declared []types.Type) (pgwire.Prepared, error) {
	words := strings.Fields(sql)
	p := &fakePrepared{s: s, sql: sql, verb: strings.ToLower(words[0])}
	switch p.verb {
	case "select", "series":
		if len(words) != 2 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "want %s N", p.verb)
		}
		n, err := strconv.ParseInt(words[1], 10, 64)
		if err != nil {
			return nil, sqlerr.New(sqlerr.SyntaxError, "bad number %q", words[1]).WithPosition(len(words[0]) + 2)
		}
		p.n = n
		if p.verb == "select" {
			p.cols = []types.Column{{Name: "?column?", Type: types.Int4}}
		} else {
			p.cols = []types.Column{{Name: "n", Type: types.Int8}}
		}
	case "echo":
		for i, w := range words[1:] {
			num, cast, _ := strings.Cut(w, "::")
			k, err := strconv.Atoi(strings.TrimPrefix(num, "$"))
			if err != nil || k < 1 {
				return nil, sqlerr.New(sqlerr.SyntaxError, "bad parameter %q", w)
			}
			t := types.Text
			if cast != "" {
				if t, err = types.Parse(cast); err != nil {
					return nil, sqlerr.New(sqlerr.UndefinedObject, "%v", err)
				}
			}
			if k <= len(declared) && declared[k-1] != types.Unknown {
				t = declared[k-1]
			}
			for len(p.params) < k {
				p.params = append(p.params, types.Text)
			}
			p.params[k-1] = t
			p.cols = append(p.cols, types.Column{Name: fmt.Sprintf("p%d", i+1), Type: t})
			p.echo = append(p.echo, k-1)
		}
		// Declared but unused parameters keep their declared type.
		for i, t := range declared {
			if i >= len(p.params) {
				p.params = append(p.params, t)
			}
		}
	case "alltypes":
		p.cols = allTypesColumns
	case "insert", "fail", "sleep", "panic", "begin", "commit":
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near \"%s\"", words[0]).WithPosition(1)
	}
	return p, nil
}

type fakePrepared struct {
	s      *fakeSession
	sql    string
	verb   string
	n      int64
	params []types.Type
	cols   []types.Column
	echo   []int // parameter index of each echo column
}

func (p *fakePrepared) ParamTypes() []types.Type { return p.params }
func (p *fakePrepared) Columns() []types.Column  { return p.cols }

func (p *fakePrepared) Execute(ctx context.Context, params []types.Datum, w pgwire.RowWriter) (string, error) {
	e := p.s.e
	e.mu.Lock()
	e.executed = append(e.executed, p.sql)
	e.mu.Unlock()
	if p.s.failed && p.verb != "commit" {
		return "", sqlerr.New("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	}
	// One reused row slice, as real engines do: the server must encode it
	// before WriteRow returns.
	row := make(types.Row, len(p.cols))
	switch p.verb {
	case "select":
		row[0] = types.NewInt(p.n)
		return "SELECT 1", w.WriteRow(row)
	case "series":
		for i := int64(1); i <= p.n; i++ {
			row[0] = types.NewInt(i)
			if err := w.WriteRow(row); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("SELECT %d", p.n), nil
	case "echo":
		for i, k := range p.echo {
			row[i] = params[k]
		}
		return "SELECT 1", w.WriteRow(row)
	case "alltypes":
		for _, r := range allTypesRows() {
			copy(row, r)
			if err := w.WriteRow(row); err != nil {
				return "", err
			}
			clear(row)
		}
		return "SELECT 2", nil
	case "insert":
		return "INSERT 0 1", nil
	case "fail":
		if p.s.tx {
			p.s.failed = true
		}
		return "", &sqlerr.Error{Code: sqlerr.DivisionByZero, Message: "division by zero",
			Detail: "some detail", Hint: "some hint", Position: 3}
	case "sleep":
		e.started <- "sleep"
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Minute):
			return "", fmt.Errorf("sleep was never cancelled")
		}
	case "panic":
		panic("fake engine panic")
	case "begin":
		p.s.tx = true
		return "BEGIN", nil
	case "commit":
		p.s.tx, p.s.failed = false, false
		return "COMMIT", nil
	}
	return "", fmt.Errorf("unreachable")
}

var allTypesColumns = []types.Column{
	{Name: "b", Type: types.Bool},
	{Name: "i2", Type: types.Int2},
	{Name: "i4", Type: types.Int4},
	{Name: "i8", Type: types.Int8},
	{Name: "f4", Type: types.Float4},
	{Name: "f8", Type: types.Float8},
	{Name: "num", Type: types.Numeric},
	{Name: "txt", Type: types.Text},
	{Name: "vc", Type: types.Varchar},
	{Name: "d", Type: types.Date},
	{Name: "ts", Type: types.Timestamp},
	{Name: "tstz", Type: types.Timestamptz},
	{Name: "iv", Type: types.Interval},
}

var (
	testTime     = time.Date(2024, 2, 29, 12, 34, 56, 789012000, time.UTC)
	testInterval = types.NewInterval(14, 3, 4*3600e6+5*60e6+6.5e6)
)

func allTypesRows() []types.Row {
	num, _, _ := apd.NewFromString("-12345.678900")
	return []types.Row{
		{
			types.NewBool(true),
			types.NewInt(-12345),
			types.NewInt(123456789),
			types.NewInt(-9_000_000_000_000_001),
			types.NewFloat(1.5),
			types.NewFloat(3.141592653589793),
			types.NewDecimal(num),
			types.NewString("héllo wörld"),
			types.NewString("varchar"),
			types.NewDate(testTime.Unix() / 86400),
			types.NewTime(testTime),
			types.NewTime(testTime),
			testInterval,
		},
		make(types.Row, len(allTypesColumns)),
	}
}
