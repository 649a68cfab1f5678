package sqllogic

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultLabel is the engine label of streamdb runs.
const DefaultLabel = "streamdb"

// DefaultTimeout bounds one attempt of one record.
const DefaultTimeout = 2 * time.Minute

// Options configures a Runner.
type Options struct {
	// Labels are the engine names that skipif/onlyif test; default
	// ["streamdb"]. Use ["postgres"] against PostgreSQL.
	Labels []string
	// Timeout bounds each attempt of a record; default 2 minutes.
	Timeout time.Duration
	// FailFast stops a file at its first failed record.
	FailFast bool
}

// Failure is a record that did not do what the file expects.
type Failure struct {
	File     string
	Line     int
	SQL      string
	Message  string
	Attempts int // attempts made, >1 only for records with retry
}

func (f *Failure) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s", f.File, f.Line, f.Message)
	if f.Attempts > 1 {
		fmt.Fprintf(&b, "\n(after %d attempts)", f.Attempts)
	}
	if f.SQL != "" {
		fmt.Fprintf(&b, "\n[SQL] %s", f.SQL)
	}
	return b.String()
}

// Report sums up a run of a file.
type Report struct {
	Ran, Skipped int
	Failures     []*Failure
}

// Runner executes records over connections to one server. It keeps the
// state that records change (sort mode, result mode, named connections)
// and is not safe for concurrent use.
type Runner struct {
	dsn      string
	opts     Options
	conns    map[string]*pgconn.PgConn
	sortMode SortMode
	valueMod bool // control resultmode valuewise
}

// NewRunner returns a runner for the server at dsn. Connections are opened
// when first needed.
func NewRunner(dsn string, opts Options) *Runner {
	if len(opts.Labels) == 0 {
		opts.Labels = []string{DefaultLabel}
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	return &Runner{dsn: dsn, opts: opts, conns: map[string]*pgconn.PgConn{}}
}

// Close closes the runner's connections.
func (r *Runner) Close() {
	for name, c := range r.conns {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.Close(ctx)
		cancel()
		delete(r.conns, name)
	}
}

// RunFile parses and runs one file. The error is for files that cannot be
// read or parsed; failed records are in the report.
func (r *Runner) RunFile(ctx context.Context, path string) (*Report, error) {
	recs, err := ParseFile(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	for _, rec := range recs {
		if rec.Kind == KindHalt {
			break
		}
		if rec.IsTest() && r.Skips(rec) {
			rep.Skipped++
			continue
		}
		if rec.IsTest() {
			rep.Ran++
		}
		if f := r.RunRecord(ctx, rec); f != nil {
			rep.Failures = append(rep.Failures, f)
			if r.opts.FailFast {
				break
			}
		}
	}
	return rep, nil
}

// Skips reports whether the record's skipif/onlyif conditions skip it.
func (r *Runner) Skips(rec *Record) bool {
	for _, c := range rec.Conditions {
		has := slices.Contains(r.opts.Labels, c.Label)
		if c.OnlyIf != has {
			return true
		}
	}
	return false
}

// RunRecord runs one record (retrying it as its retry clause allows) and
// returns nil if it did what the file expects. Skip conditions are not
// checked here (see Skips); halt is the caller's business.
func (r *Runner) RunRecord(ctx context.Context, rec *Record) *Failure {
	switch rec.Kind {
	case KindSleep:
		if err := sleepCtx(ctx, rec.Duration); err != nil {
			return &Failure{File: rec.File, Line: rec.Line, Message: err.Error()}
		}
		return nil
	case KindControl:
		r.control(rec)
		return nil
	case KindStatement, KindQuery, KindSystem:
	default: // hash-threshold, subtest, halt
		return nil
	}
	attempts := 1
	if rec.Retry != nil {
		attempts = rec.Retry.Attempts
	}
	var msg string
	for i := 1; ; i++ {
		msg = r.attempt(ctx, rec)
		if msg == "" {
			return nil
		}
		if i == attempts || ctx.Err() != nil {
			return &Failure{File: rec.File, Line: rec.Line, SQL: rec.SQL, Message: msg, Attempts: i}
		}
		if err := sleepCtx(ctx, rec.Retry.Backoff); err != nil {
			return &Failure{File: rec.File, Line: rec.Line, SQL: rec.SQL, Message: msg, Attempts: i}
		}
	}
}

func (r *Runner) control(rec *Record) {
	switch rec.Control[0] {
	case "sortmode":
		r.sortMode, _ = parseSortMode(rec.Control[1])
	case "resultmode":
		r.valueMod = rec.Control[1] == "valuewise"
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// attempt runs a record once and returns "" or what went wrong.
func (r *Runner) attempt(ctx context.Context, rec *Record) string {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	if rec.Kind == KindSystem {
		return runSystem(ctx, rec)
	}
	out, err := r.exec(ctx, rec.Connection, rec.SQL)
	kind := "statement"
	if rec.Kind == KindQuery {
		kind = "query"
	}
	if rec.Expect == ExpectError {
		if err == nil {
			return kind + " is expected to fail, but actually succeeded"
		}
		if !errorMatches(rec.Err, err) {
			return fmt.Sprintf("%s is expected to fail with error:\n\t%s\nbut got error:\n\t%s", kind, rec.Err, errorText(err))
		}
		return ""
	}
	if err != nil {
		return fmt.Sprintf("%s failed: %s", kind, errorText(err))
	}
	if rec.Kind == KindStatement {
		if rec.Expect == ExpectCount {
			n := out.count
			if out.hasRows {
				n = uint64(len(out.rows))
			}
			if n != rec.Count {
				return fmt.Sprintf("statement is expected to affect %d rows, but actually %d", rec.Count, n)
			}
		}
		return ""
	}
	mode := rec.Sort
	if mode == SortDefault {
		mode = r.sortMode
	}
	rows := sortRows(out.rows, mode)
	if r.valueMod {
		rows = valueWise(rows)
	}
	if !resultsMatch(rows, rec.Results) {
		return "query result mismatch:\n[Diff] (-expected|+actual)\n" + lineDiff(rec.Results, rowLines(rows))
	}
	return ""
}

// output is what one record's SQL returned.
type output struct {
	hasRows bool       // some statement returned a row description
	rows    [][]string // formatted values of all returned rows
	count   uint64     // rows affected by the last statement
}

// exec runs sql on the named connection with the simple query protocol.
func (r *Runner) exec(ctx context.Context, name, sql string) (*output, error) {
	conn, err := r.conn(ctx, name)
	if err != nil {
		return nil, err
	}
	results, err := conn.Exec(ctx, sql).ReadAll()
	if conn.IsClosed() {
		delete(r.conns, name) // reconnect next time
	}
	if err != nil {
		return nil, err
	}
	out := &output{}
	for _, res := range results {
		if res.Err != nil {
			return nil, res.Err
		}
		if len(res.FieldDescriptions) > 0 {
			out.hasRows = true
		}
		for _, row := range res.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				vals[i] = formatValue(v)
			}
			out.rows = append(out.rows, vals)
		}
		out.count = uint64(res.CommandTag.RowsAffected())
	}
	return out, nil
}

// conn returns the named connection, opening it if needed.
func (r *Runner) conn(ctx context.Context, name string) (*pgconn.PgConn, error) {
	if c, ok := r.conns[name]; ok && !c.IsClosed() {
		return c, nil
	}
	c, err := pgconn.Connect(ctx, r.dsn)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", r.dsn, err)
	}
	r.conns[name] = c
	return c, nil
}

// errorText renders an error for messages and regex matching: for server
// errors "SEVERITY: message (SQLSTATE code)" plus DETAIL and HINT lines.
func errorText(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	s := fmt.Sprintf("%s: %s (SQLSTATE %s)", pe.Severity, pe.Message, pe.Code)
	if pe.Detail != "" {
		s += "\nDETAIL: " + pe.Detail
	}
	if pe.Hint != "" {
		s += "\nHINT: " + pe.Hint
	}
	return s
}

// errorMatches checks an error against what the record expects.
func errorMatches(want ExpectedError, err error) bool {
	var pe *pgconn.PgError
	isPG := errors.As(err, &pe)
	switch {
	case want.SQLState != "":
		return isPG && pe.Code == want.SQLState
	case want.Regex != nil:
		return want.Regex.MatchString(errorText(err)) || (isPG && want.Regex.MatchString(pe.Message))
	case want.Multiline != "":
		return strings.TrimSpace(errorText(err)) == want.Multiline || (isPG && strings.TrimSpace(pe.Message) == want.Multiline)
	}
	return true
}

// runSystem runs a system record's command with bash.
func runSystem(ctx context.Context, rec *Record) string {
	cmd := exec.CommandContext(ctx, "bash", "-c", rec.SQL)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Sprintf("system command failed: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if rec.Stdout != nil && strings.TrimSpace(stdout.String()) != *rec.Stdout {
		return "system command stdout mismatch:\n[Diff] (-expected|+actual)\n" +
			lineDiff(strings.Split(*rec.Stdout, "\n"), strings.Split(strings.TrimSpace(stdout.String()), "\n"))
	}
	return ""
}
