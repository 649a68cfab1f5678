// Command slt runs sqllogictest files against any PostgreSQL-protocol
// server and prints PASS or FAIL per file.
//
//	go run ./tests/sqllogic/cmd/slt -dsn postgres://streamdb@127.0.0.1:5433/streamdb tests/sqllogic/testdata/streamdb/*.slt
//
// The DSN defaults to $STREAMDB_DSN, then to streamdb's default address.
// It exits 1 if a file failed and 2 on usage or parse errors.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"streamdb/tests/sqllogic"
)

func main() {
	defaultDSN := os.Getenv("STREAMDB_DSN")
	if defaultDSN == "" {
		defaultDSN = "postgres://streamdb@127.0.0.1:5433/streamdb?sslmode=disable"
	}
	dsn := flag.String("dsn", defaultDSN, "server to test (PostgreSQL URL or key=value DSN)")
	labels := flag.String("label", sqllogic.DefaultLabel, "engine labels for skipif/onlyif, comma separated (postgres for PostgreSQL)")
	failFast := flag.Bool("fail-fast", false, "stop a file at its first failure")
	timeout := flag.Duration("timeout", sqllogic.DefaultTimeout, "limit for one attempt of one record")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: slt [flags] file.slt|glob ...\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	files, err := expand(flag.Args())
	if err != nil || len(files) == 0 {
		if err == nil {
			err = fmt.Errorf("no .slt files given")
		}
		fmt.Fprintln(os.Stderr, "slt:", err)
		flag.Usage()
		os.Exit(2)
	}
	opts := sqllogic.Options{Labels: strings.Split(*labels, ","), FailFast: *failFast, Timeout: *timeout}

	code := 0
	passed := 0
	for _, f := range files {
		start := time.Now()
		r := sqllogic.NewRunner(*dsn, opts)
		rep, err := r.RunFile(context.Background(), f)
		r.Close()
		took := time.Since(start).Round(time.Millisecond)
		switch {
		case err != nil:
			fmt.Printf("ERROR %s: %v\n", f, err)
			code = 2
		case len(rep.Failures) > 0:
			fmt.Printf("FAIL %s (%d of %d records failed, %d skipped, %v)\n", f, len(rep.Failures), rep.Ran, rep.Skipped, took)
			for _, fl := range rep.Failures {
				fmt.Printf("\n%s\n", indent(fl.Error()))
			}
			fmt.Println()
			code = max(code, 1)
		default:
			fmt.Printf("PASS %s (%d records, %d skipped, %v)\n", f, rep.Ran, rep.Skipped, took)
			passed++
		}
	}
	fmt.Printf("%d of %d files passed\n", passed, len(files))
	os.Exit(code)
}

// expand resolves glob patterns among the arguments.
func expand(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		m, err := filepath.Glob(a)
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("no file matches %s", a)
		}
		files = append(files, m...)
	}
	return files, nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
