package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/checkpoint"
)

// savepointCommand runs `streamdb savepoint create|list|release|rollback`
// against a running server, as `flink savepoint` does: each is one SQL
// statement over the PostgreSQL protocol.
func savepointCommand(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("streamdb savepoint", flag.ContinueOnError)
	server := fs.String("server", "postgres://streamdb@127.0.0.1:5433/streamdb", "connection string of the running server")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long to wait for the statement")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: streamdb savepoint [--server DSN] create NAME | list | release NAME | rollback NAME")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fs.Usage()
		return fmt.Errorf("missing action")
	}
	var sql string
	switch action := rest[0]; {
	case action == "list" && len(rest) == 1:
		sql = "SHOW SAVEPOINTS"
	case action == "create" && len(rest) == 2:
		sql = "SAVEPOINT " + quoteIdent(rest[1])
	case action == "release" && len(rest) == 2:
		sql = "RELEASE SAVEPOINT " + quoteIdent(rest[1])
	case action == "rollback" && len(rest) == 2:
		sql = "ROLLBACK TO SAVEPOINT " + quoteIdent(rest[1])
	default:
		fs.Usage()
		return fmt.Errorf("bad arguments: %s", strings.Join(rest, " "))
	}
	if len(rest) == 2 {
		// The server refuses such names too; checking here sends nothing.
		if err := checkpoint.CheckSavepointName(rest[1]); err != nil {
			return fmt.Errorf("%v (SQLSTATE 42602); a savepoint name is an identifier of at most %d bytes: no / or \\, no control characters, not starting with a dot", err, checkpoint.MaxSavepointNameLen)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, *server)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", *server, err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return err
	}
	defer rows.Close()
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fields := rows.FieldDescriptions()
	if len(fields) > 0 {
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = f.Name
		}
		fmt.Fprintln(tw, strings.Join(names, "\t"))
	}
	for rows.Next() {
		raw := rows.RawValues()
		vals := make([]string, len(raw))
		for i, v := range raw {
			vals[i] = string(v)
		}
		fmt.Fprintln(tw, strings.Join(vals, "\t"))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	tw.Flush()
	fmt.Fprintln(out, rows.CommandTag().String())
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
