package sqllogic

import (
	"fmt"
	"regexp"
	"time"
)

// Kind is the kind of a record.
type Kind int

// Record kinds.
const (
	KindStatement Kind = iota
	KindQuery
	KindSystem
	KindSleep
	KindControl
	KindHashThreshold
	KindSubtest
	KindHalt
)

// StatementExpect is what a statement record expects.
type StatementExpect int

// Statement expectations.
const (
	ExpectOK    StatementExpect = iota // statement ok
	ExpectCount                        // statement count N
	ExpectError                        // statement error / query error
)

// SortMode orders query results before comparison.
type SortMode int

// Sort modes. SortDefault means "as the file-level control says".
const (
	SortDefault SortMode = iota
	NoSort
	RowSort
	ValueSort
)

func parseSortMode(s string) (SortMode, bool) {
	switch s {
	case "nosort":
		return NoSort, true
	case "rowsort":
		return RowSort, true
	case "valuesort":
		return ValueSort, true
	}
	return SortDefault, false
}

// Condition is a skipif or onlyif line in front of a record.
type Condition struct {
	OnlyIf bool // true for onlyif, false for skipif
	Label  string
}

// Retry is the `retry N backoff D` suffix of a record.
type Retry struct {
	Attempts int
	Backoff  time.Duration
}

// ExpectedError describes the error a record expects.
type ExpectedError struct {
	// Any is set when no message was given: every error matches.
	Any bool
	// SQLState, when set, must equal the error's SQLSTATE code.
	SQLState string
	// Regex, when set, is searched for in the error text.
	Regex *regexp.Regexp
	// Multiline, when set, must equal the error message (trimmed).
	Multiline string
}

func (e ExpectedError) String() string {
	switch {
	case e.SQLState != "":
		return "(SQLSTATE) " + e.SQLState
	case e.Regex != nil:
		return "(regex) " + e.Regex.String()
	case e.Multiline != "":
		return "(multiline) " + e.Multiline
	}
	return "(any)"
}

// Record is one directive of an .slt file. Which fields matter depends on
// Kind.
type Record struct {
	Kind Kind
	File string // the file the record is in (an included file for included records)
	Line int    // 1-based line of the record's first line

	Conditions []Condition
	Connection string // named connection, "" for the default one
	Retry      *Retry

	SQL string // statement or query text; command for system

	Expect StatementExpect // statements; ExpectError also for queries
	Count  uint64          // statement count N
	Err    ExpectedError   // when Expect == ExpectError

	Types    string   // query column type letters
	Sort     SortMode // query sort mode
	Label    string   // query label
	Results  []string // expected result lines of a query
	Stdout   *string  // expected stdout of a system command
	Duration time.Duration

	// Control is the control directive's words, e.g. ["sortmode", "rowsort"].
	Control []string
	// Name is a subtest's name.
	Name string
}

// Loc returns "file:line".
func (r *Record) Loc() string { return fmt.Sprintf("%s:%d", r.File, r.Line) }

// IsTest reports whether the record runs something that can fail
// (statement, query or system command).
func (r *Record) IsTest() bool {
	return r.Kind == KindStatement || r.Kind == KindQuery || r.Kind == KindSystem
}
