package front

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small reader for data-driven test files in the style of
// github.com/cockroachdb/datadriven:
//
//	# comment
//	command [args...]
//	input line(s)
//	----
//	expected output
//	<blank line>
//
// Expected output that contains blank lines is written between "----" and
// "----" lines after the separator. Run with -rewrite to regenerate the
// expected output from the actual one.

var rewriteFlag = flag.Bool("rewrite", false, "rewrite the expected output of data-driven tests")

type testCase struct {
	pos      string // file:line
	cmd      string
	args     []string
	input    string
	expected string
	// the case's place in the file, for rewriting
	startLine, endLine int
}

// readCases parses a test file.
func readCases(path string) ([]testCase, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var cases []testCase
	for i := 0; i < len(lines); {
		line := lines[i]
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			i++
			continue
		}
		fields := strings.Fields(line)
		c := testCase{pos: fmt.Sprintf("%s:%d", filepath.Base(path), i+1), cmd: fields[0], args: fields[1:], startLine: i}
		i++
		var input []string
		for i < len(lines) && lines[i] != "----" {
			input = append(input, lines[i])
			i++
		}
		if i >= len(lines) {
			return nil, nil, fmt.Errorf("%s: missing ----", c.pos)
		}
		c.input = strings.Join(input, "\n")
		i++ // ----
		var out []string
		if i < len(lines) && lines[i] == "----" {
			i++
			for i < len(lines) && !(lines[i] == "----" && i+1 < len(lines) && lines[i+1] == "----") {
				out = append(out, lines[i])
				i++
			}
			i += 2
		} else {
			for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
				out = append(out, lines[i])
				i++
			}
		}
		c.expected = strings.Join(out, "\n")
		c.endLine = i
		cases = append(cases, c)
	}
	return cases, lines, nil
}

// runFile runs every case of a test file through fn.
func runFile(t *testing.T, path string, fn func(t *testing.T, c *testCase) string) {
	cases, lines, err := readCases(path)
	if err != nil {
		t.Fatal(err)
	}
	var rewritten []string
	last := 0
	for i := range cases {
		c := &cases[i]
		actual := strings.TrimRight(fn(t, c), "\n")
		if *rewriteFlag {
			rewritten = append(rewritten, lines[last:c.startLine]...)
			rewritten = append(rewritten, lines[c.startLine])
			if c.input != "" {
				rewritten = append(rewritten, strings.Split(c.input, "\n")...)
			}
			rewritten = append(rewritten, "----")
			if strings.Contains(actual, "\n\n") {
				rewritten = append(rewritten, "----", actual, "----", "----")
			} else if actual != "" {
				rewritten = append(rewritten, actual)
			}
			last = c.endLine
			continue
		}
		if actual != c.expected {
			t.Errorf("%s: %s\n%s\nexpected:\n%s\nactual:\n%s", c.pos, c.cmd, c.input, c.expected, actual)
		}
	}
	if *rewriteFlag {
		rewritten = append(rewritten, lines[last:]...)
		if err := os.WriteFile(path, []byte(strings.Join(rewritten, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
