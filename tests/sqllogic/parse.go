package sqllogic

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const resultsDelimiter = "----"

// ParseError is a syntax error in an .slt file.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d: parse error: %s", e.File, e.Line, e.Msg)
}

// ParseFile reads an .slt file and the files it includes (in place of each
// include record) and returns its records in order.
func ParseFile(path string) ([]*Record, error) {
	return parseFile(path, 0)
}

func parseFile(path string, depth int) ([]*Record, error) {
	if depth > 32 {
		return nil, &ParseError{File: path, Msg: "includes nested too deep (a cycle?)"}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	recs, includes, err := parseScript(path, string(data))
	if err != nil {
		return nil, err
	}
	if len(includes) == 0 {
		return recs, nil
	}
	// Splice included records in place of their include lines.
	var out []*Record
	next := 0
	for _, inc := range includes {
		out = append(out, recs[next:inc.at]...)
		next = inc.at
		pattern := filepath.Join(filepath.Dir(path), inc.pattern)
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, &ParseError{File: path, Line: inc.line, Msg: fmt.Sprintf("invalid include pattern %q: %v", inc.pattern, err)}
		}
		if len(matches) == 0 {
			return nil, &ParseError{File: path, Line: inc.line, Msg: fmt.Sprintf("no files match include pattern %q", inc.pattern)}
		}
		sort.Strings(matches)
		for _, m := range matches {
			sub, err := parseFile(m, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return append(out, recs[next:]...), nil
}

// include is an include line: its records go before recs[at].
type include struct {
	at      int
	line    int
	pattern string
}

// ParseScript parses the text of one .slt file named name. Include lines
// are not followed (use ParseFile).
func ParseScript(name, text string) ([]*Record, error) {
	recs, _, err := parseScript(name, text)
	return recs, err
}

type parser struct {
	file  string
	lines []string
	pos   int // index of the next line to read
}

func (p *parser) next() (string, bool) {
	if p.pos >= len(p.lines) {
		return "", false
	}
	p.pos++
	return p.lines[p.pos-1], true
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &ParseError{File: p.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func parseScript(name, text string) ([]*Record, []include, error) {
	p := &parser{file: name, lines: splitLines(text)}
	var recs []*Record
	var incs []include
	var conds []Condition
	conn := ""
	for {
		line, ok := p.next()
		if !ok {
			break
		}
		num := p.pos
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		tok := strings.Fields(line)
		if len(tok) == 0 {
			continue
		}
		rec := &Record{File: name, Line: num}
		switch {
		case tok[0] == "include" && len(tok) == 2:
			incs = append(incs, include{at: len(recs), line: num, pattern: tok[1]})
			continue
		case tok[0] == "halt" && len(tok) == 1:
			rec.Kind = KindHalt
		case tok[0] == "subtest" && len(tok) == 2:
			rec.Kind, rec.Name = KindSubtest, tok[1]
		case tok[0] == "sleep" && len(tok) == 2:
			d, err := parseDuration(tok[1])
			if err != nil {
				return nil, nil, p.errorf(num, "invalid duration %q", tok[1])
			}
			rec.Kind, rec.Duration = KindSleep, d
		case (tok[0] == "skipif" || tok[0] == "onlyif") && len(tok) == 2:
			conds = append(conds, Condition{OnlyIf: tok[0] == "onlyif", Label: tok[1]})
			continue
		case tok[0] == "connection" && len(tok) == 2:
			conn = tok[1]
			if conn == "default" {
				conn = ""
			}
			continue
		case tok[0] == "statement":
			if err := p.statement(rec, tok[1:], line); err != nil {
				return nil, nil, err
			}
		case tok[0] == "query":
			if err := p.query(rec, tok[1:]); err != nil {
				return nil, nil, err
			}
		case tok[0] == "system" && len(tok) >= 2 && tok[1] == "ok":
			if err := p.system(rec, tok[2:]); err != nil {
				return nil, nil, err
			}
		case tok[0] == "control":
			if err := p.control(rec, tok[1:], line); err != nil {
				return nil, nil, err
			}
		case tok[0] == "hash-threshold" && len(tok) == 2:
			if _, err := strconv.ParseUint(tok[1], 10, 64); err != nil {
				return nil, nil, p.errorf(num, "invalid number %q", tok[1])
			}
			rec.Kind = KindHashThreshold
		default:
			return nil, nil, p.errorf(num, "invalid line %q", line)
		}
		if rec.IsTest() {
			rec.Conditions, conds = conds, nil
			rec.Connection, conn = conn, ""
		}
		recs = append(recs, rec)
	}
	return recs, incs, nil
}

// sqlLines reads the record body: lines up to a blank line or the results
// delimiter. The first body line is taken whatever it holds.
func (p *parser) sqlLines(header int) (string, bool, error) {
	first, ok := p.next()
	if !ok {
		return "", false, p.errorf(header+1, "unexpected end of file")
	}
	lines := []string{first}
	for {
		l, ok := p.next()
		if !ok || l == "" {
			return strings.Join(lines, "\n"), false, nil
		}
		if l == resultsDelimiter {
			return strings.Join(lines, "\n"), true, nil
		}
		lines = append(lines, l)
	}
}

// multiline reads lines under ---- up to two consecutive blank lines (or
// the end of the file) and returns them trimmed.
func (p *parser) multiline() string {
	var b strings.Builder
	for {
		l, ok := p.next()
		if !ok {
			break
		}
		if l == "" && (p.pos >= len(p.lines) || p.lines[p.pos] == "") {
			p.next()
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String())
}

// splitErrorRetry splits the tokens after `error` into the expected error
// and a trailing `retry N backoff D` clause. (sqllogictest-rs takes a retry
// clause after `error` only when no message precedes it; a message followed
// by a retry clause is an extension.)
func splitErrorRetry(tok []string) (ExpectedError, []string, error) {
	var rest []string
	if n := len(tok); n >= 4 && tok[n-4] == "retry" && tok[n-2] == "backoff" {
		tok, rest = tok[:n-4], tok[n-4:]
	}
	e, err := parseExpectedError(tok)
	return e, rest, err
}

func (p *parser) statement(rec *Record, tok []string, line string) error {
	rec.Kind = KindStatement
	var rest []string
	switch {
	case len(tok) >= 1 && tok[0] == "ok":
		rec.Expect, rest = ExpectOK, tok[1:]
	case len(tok) >= 1 && tok[0] == "error":
		rec.Expect = ExpectError
		var err error
		if rec.Err, rest, err = splitErrorRetry(tok[1:]); err != nil {
			return p.errorf(rec.Line, "%v", err)
		}
	case len(tok) >= 2 && tok[0] == "count":
		n, err := strconv.ParseUint(tok[1], 10, 64)
		if err != nil {
			return p.errorf(rec.Line, "invalid number %q", tok[1])
		}
		rec.Expect, rec.Count, rest = ExpectCount, n, tok[2:]
	default:
		return p.errorf(rec.Line, "invalid line %q", line)
	}
	retry, err := parseRetry(rest)
	if err != nil {
		return p.errorf(rec.Line, "%v", err)
	}
	rec.Retry = retry
	sql, hasResults, err := p.sqlLines(rec.Line)
	if err != nil {
		return err
	}
	rec.SQL = sql
	if hasResults {
		if rec.Expect != ExpectError {
			return p.errorf(rec.Line, "statement should have no result, use `query` instead")
		}
		if !rec.Err.Any {
			return p.errorf(rec.Line, "duplicated error messages after `error` and under `----`")
		}
		rec.Err = ExpectedError{Multiline: p.multiline()}
	}
	return nil
}

func (p *parser) query(rec *Record, tok []string) error {
	rec.Kind = KindQuery
	var rest []string
	switch {
	case len(tok) >= 1 && tok[0] == "error":
		rec.Expect = ExpectError
		var err error
		if rec.Err, rest, err = splitErrorRetry(tok[1:]); err != nil {
			return p.errorf(rec.Line, "%v", err)
		}
	case len(tok) >= 1:
		// query <types> [<sort mode>] [<label>] [retry <n> backoff <d>]
		rec.Types, rest = tok[0], tok[1:]
		if len(rest) > 0 {
			if m, ok := parseSortMode(rest[0]); ok {
				rec.Sort, rest = m, rest[1:]
			}
		}
		if len(rest) > 0 && rest[0] != "retry" {
			rec.Label, rest = rest[0], rest[1:]
		}
	}
	retry, err := parseRetry(rest)
	if err != nil {
		return p.errorf(rec.Line, "%v", err)
	}
	rec.Retry = retry
	sql, hasResults, err := p.sqlLines(rec.Line)
	if err != nil {
		return err
	}
	rec.SQL = sql
	if !hasResults {
		return nil
	}
	if rec.Expect == ExpectError {
		if !rec.Err.Any {
			return p.errorf(rec.Line, "duplicated error messages after `error` and under `----`")
		}
		rec.Err = ExpectedError{Multiline: p.multiline()}
		return nil
	}
	for {
		l, ok := p.next()
		if !ok || l == "" {
			break
		}
		rec.Results = append(rec.Results, l)
	}
	return nil
}

func (p *parser) system(rec *Record, tok []string) error {
	rec.Kind = KindSystem
	retry, err := parseRetry(tok)
	if err != nil {
		return p.errorf(rec.Line, "%v", err)
	}
	rec.Retry = retry
	cmd, hasResults, err := p.sqlLines(rec.Line)
	if err != nil {
		return err
	}
	rec.SQL = cmd
	if hasResults {
		out := p.multiline()
		rec.Stdout = &out
	}
	return nil
}

func (p *parser) control(rec *Record, tok []string, line string) error {
	rec.Kind, rec.Control = KindControl, tok
	if len(tok) != 2 {
		return p.errorf(rec.Line, "invalid line %q", line)
	}
	ok := false
	switch tok[0] {
	case "sortmode":
		_, ok = parseSortMode(tok[1])
	case "resultmode":
		ok = tok[1] == "rowwise" || tok[1] == "valuewise"
	case "substitution":
		ok = tok[1] == "on" || tok[1] == "off"
	}
	if !ok {
		return p.errorf(rec.Line, "invalid control %q", line)
	}
	return nil
}

var sqlStateRe = regexp.MustCompile(`^[0-9A-Z]{5}$`)

// looksLikeSQLState reports whether s is a five-character SQLSTATE such as
// 42P01 (upper-case letters and digits, at least one digit).
func looksLikeSQLState(s string) bool {
	return sqlStateRe.MatchString(s) && strings.ContainsAny(s, "0123456789")
}

func parseExpectedError(tok []string) (ExpectedError, error) {
	text := strings.Join(tok, " ")
	switch {
	case text == "":
		return ExpectedError{Any: true}, nil
	case looksLikeSQLState(text):
		return ExpectedError{SQLState: text}, nil
	}
	re, err := regexp.Compile(text)
	if err != nil {
		return ExpectedError{}, fmt.Errorf("invalid error regex %q: %v", text, err)
	}
	return ExpectedError{Regex: re}, nil
}

// parseRetry parses an optional `retry N backoff D`.
func parseRetry(tok []string) (*Retry, error) {
	if len(tok) == 0 {
		return nil, nil
	}
	if tok[0] != "retry" {
		return nil, fmt.Errorf("unexpected token %q", tok[0])
	}
	if len(tok) != 4 || tok[2] != "backoff" {
		return nil, fmt.Errorf("invalid retry: want `retry <attempts> backoff <duration>`, got %q", strings.Join(tok, " "))
	}
	n, err := strconv.Atoi(tok[1])
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("invalid retry attempts %q: want a positive number", tok[1])
	}
	d, err := parseDuration(tok[3])
	if err != nil {
		return nil, fmt.Errorf("invalid duration %q", tok[3])
	}
	return &Retry{Attempts: n, Backoff: d}, nil
}
