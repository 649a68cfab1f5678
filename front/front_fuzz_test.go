package front

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"streamdb/sqlerr"
)

// FuzzParse runs Split, SplitPieces and Parse on arbitrary text: none may
// panic or hang, every error is an *sqlerr.Error with a SQLSTATE other than
// XX000 and a position inside the text (or just past it), and every piece
// of a split is text of the input, found at its offset, that Parse reads
// with the same guarantees.
//
// The seeds are the inputs of every case under testdata plus the f.Add
// calls below. (They live in code, not in testdata/fuzz/FuzzParse: the
// data-driven tests read every file under testdata.)
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, file := range files {
		cases, _, err := readCases(file)
		if err != nil {
			continue // a directory
		}
		for _, c := range cases {
			f.Add(c.input)
		}
	}
	for _, s := range []string{
		"",
		";;;",
		"select 1; select 2",
		"SELECT $1::int, E'\\x41\\u00e9', $$a;b$$, $tag$x$tag$ FROM t WHERE a IS NOT DISTINCT FROM b",
		"CREATE STREAM s (a int, ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (subject = 's', format = 'json')",
		"CREATE MATERIALIZED VIEW v AS SELECT k, count(*) FILTER (WHERE x > 0) FROM TUMBLE(s, ts, INTERVAL '1' MINUTE) GROUP BY k ORDER BY 2 DESC NULLS LAST LIMIT 3",
		"SELECT * FROM a FULL JOIN b ON a.x = b.x AS OF SAVEPOINT sp",
		"/* unterminated",
		"select 'unterminated",
		"select \"quoted ident",
		"select ((((((((((1))))))))))",
		"select 1 -- comment\n; -- only a comment",
		"INSERT INTO t VALUES (1, 'a'), (2, NULL); UPDATE t SET a = a + 1 WHERE b ~ 'x'; DELETE FROM t",
		"EXPLAIN CREATE MATERIALIZED VIEW v AS SELECT 1",
		"ALTER SYSTEM SET state.checkpoints.num-retained = 5",
		"ROLLBACK TO SAVEPOINT \"../x\"",
		"select U&'\\0041', x'ff', 1e10, .5, 0x1f, 1..2",
		"select \xff\xfe",
		"\u0085", // a Unicode space the lexer does not skip
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		defer watchdog(10 * time.Second)()
		pieces := SplitPieces(sql)
		if got := Split(sql); len(got) != len(pieces) {
			t.Fatalf("Split gave %d statements, SplitPieces %d", len(got), len(pieces))
		}
		for i, p := range pieces {
			if p.Text == "" {
				t.Fatalf("piece %d is empty", i)
			}
			if p.Offset < 0 || p.Offset > len(sql) || !strings.HasPrefix(sql[p.Offset:], p.Text) {
				t.Fatalf("piece %d %q is not at offset %d", i, p.Text, p.Offset)
			}
			checkParse(t, p.Text)
		}
		checkParse(t, sql)
	})
}

func checkParse(t *testing.T, sql string) {
	t.Helper()
	st, err := Parse(sql)
	if err == nil {
		if st == nil || st.Node == nil {
			t.Fatalf("%q: no error and no statement", sql)
		}
		return
	}
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code == "" || e.Code == sqlerr.InternalError {
		t.Fatalf("%q: error without a proper SQLSTATE: %v", sql, err)
	}
	if e.Position < 0 || e.Position > utf8.RuneCountInString(sql)+1 {
		t.Fatalf("%q: position %d outside the text", sql, e.Position)
	}
}

// watchdog crashes the process (with every goroutine's stack) if one input
// runs longer than d, so that the fuzzer records a hang as a failing input
// instead of stalling. Call the returned function when the input is done.
func watchdog(d time.Duration) (stop func()) {
	timer := time.AfterFunc(d, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("input still running after %v", d))
	})
	return func() { timer.Stop() }
}
