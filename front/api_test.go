package front

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/sqlerr"
)

// corpus returns the inputs of every parse case under testdata.
func corpus(t *testing.T) []string {
	files, _ := filepath.Glob("testdata/*")
	var inputs []string
	for _, f := range files {
		cases, _, err := readCases(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			inputs = append(inputs, c.input)
		}
	}
	return inputs
}

// TestNoPanics parses every prefix of every test input, and every input
// with one token left out: no panic, and every error is an *sqlerr.Error
// with a position inside the text (or just past it).
func TestNoPanics(t *testing.T) {
	check := func(sql string) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("panic on %q: %v", sql, r)
			}
		}()
		Split(sql)
		_, err := Parse(sql)
		if err == nil {
			return
		}
		var e *sqlerr.Error
		if !errors.As(err, &e) || e.Code == sqlerr.InternalError {
			t.Fatalf("%q: error without SQLSTATE: %v", sql, err)
		}
		if e.Position > utf8.RuneCountInString(sql)+1 {
			t.Fatalf("%q: position %d past the end", sql, e.Position)
		}
	}
	for _, in := range corpus(t) {
		for i := range in {
			check(in[:i])
		}
		toks, _ := lex(in)
		for _, drop := range toks {
			check(in[:drop.pos] + " " + in[drop.end:])
		}
	}
}

// TestConcurrentParse runs parses in parallel (the TiDB parsers are pooled).
func TestConcurrentParse(t *testing.T) {
	inputs := corpus(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, in := range inputs {
				_, _ = Parse(in)
			}
		}()
	}
	wg.Wait()
}

// TestWindowTableInAST checks that the generated window table is what the
// query's FROM names.
func TestWindowTableInAST(t *testing.T) {
	st, err := Parse("SELECT window_start, count(*) FROM TUMBLE(bids, date_time, INTERVAL '10' SECOND) GROUP BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	st.Node.(ast.Node).Accept(visitor(func(n ast.Node) {
		if tn, ok := n.(*ast.TableName); ok {
			names = append(names, tn.Name.O)
		}
	}))
	if len(names) != 1 || st.Windows[names[0]] == nil {
		t.Fatalf("tables %v, windows %v", names, st.Windows)
	}
	if w := st.Windows[names[0]]; w.Kind != Tumble || w.Source != "bids" || w.Size != "10 second" {
		t.Fatalf("window %+v", w)
	}
}

// TestNodeTypes checks the Go types callers switch on.
func TestNodeTypes(t *testing.T) {
	st, err := Parse("CREATE STREAM s (ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)")
	if err != nil {
		t.Fatal(err)
	}
	cs := st.Node.(*CreateSource)
	if _, ok := cs.Watermark.Expr.(*ast.BinaryOperationExpr); !ok {
		t.Fatalf("watermark expr %T", cs.Watermark.Expr)
	}
	st, err = Parse("CREATE MATERIALIZED VIEW v AS SELECT 1 UNION ALL SELECT 2")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Node.(*CreateMaterializedView).Query.(*ast.SetOprStmt); !ok {
		t.Fatalf("query %T", st.Node.(*CreateMaterializedView).Query)
	}
	if st.Text != "CREATE MATERIALIZED VIEW v AS SELECT 1 UNION ALL SELECT 2" {
		t.Fatalf("text %q", st.Text)
	}
}
