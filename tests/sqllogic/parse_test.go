package sqllogic

import (
	"strings"
	"testing"
	"time"
)

func TestParseRecords(t *testing.T) {
	recs, err := ParseScript("x.slt", `# comment
statement ok
CREATE TABLE t (a INT)

skipif postgres
onlyif streamdb
connection c2
query IT rowsort lbl retry 3 backoff 2s
SELECT a,
  b FROM t
----
1 x
2 y

statement error 42P01 retry 2 backoff 10ms
SELECT 1

query error retry 4 backoff 1ms
SELECT 2
----
line one
line two


statement count 5
DELETE FROM t

sleep 250ms

control sortmode valuesort

halt
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 8 || recs[7].Kind != KindHalt {
		t.Fatalf("got %d records", len(recs))
	}
	q := recs[1]
	if q.Kind != KindQuery || q.Line != 8 || q.Types != "IT" || q.Sort != RowSort || q.Label != "lbl" ||
		q.Retry == nil || q.Retry.Attempts != 3 || q.Retry.Backoff != 2*time.Second ||
		q.SQL != "SELECT a,\n  b FROM t" || strings.Join(q.Results, "|") != "1 x|2 y" ||
		q.Connection != "c2" || len(q.Conditions) != 2 || q.Conditions[0].OnlyIf || !q.Conditions[1].OnlyIf {
		t.Errorf("query record = %+v", q)
	}
	if s := recs[2]; s.Expect != ExpectError || s.Err.SQLState != "42P01" || s.Retry.Attempts != 2 || s.Connection != "" || len(s.Conditions) != 0 {
		t.Errorf("statement error record = %+v", s)
	}
	if s := recs[3]; s.Expect != ExpectError || s.Err.Multiline != "line one\nline two" || s.Retry.Attempts != 4 {
		t.Errorf("query error record = %+v", s)
	}
	if s := recs[4]; s.Expect != ExpectCount || s.Count != 5 || s.Line != 25 {
		t.Errorf("statement count record = %+v", s)
	}
	if s := recs[5]; s.Kind != KindSleep || s.Duration != 250*time.Millisecond {
		t.Errorf("sleep record = %+v", s)
	}
	if recs[6].Kind != KindControl || recs[6].Control[1] != "valuesort" {
		t.Errorf("control record = %+v", recs[6])
	}
}

func TestParseErrors(t *testing.T) {
	for _, script := range []string{
		"statement maybe\nSELECT 1\n",
		"statement ok\nSELECT 1\n----\n1\n",
		"statement error foo\nSELECT 1\n----\nbar\n",
		"query I retry 0 backoff 1s\nSELECT 1\n",
		"query I retry 2 backof 1s\nSELECT 1\n",
		"query I retry 2 backoff soon\nSELECT 1\n",
		"sleep forever\n",
		"control sortmode sideways\n",
		"frobnicate\n",
		"statement ok\n",
		"statement error (unclosed\nSELECT 1\n",
	} {
		if _, err := ParseScript("bad.slt", script); err == nil {
			t.Errorf("no parse error for %q", script)
		} else if !strings.Contains(err.Error(), "bad.slt:") {
			t.Errorf("error %q has no location", err)
		}
	}
}

func TestParseIncludeMissing(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/a.slt"
	writeFile(t, path, "include nothing-*.slt\n")
	if _, err := ParseFile(path); err == nil || !strings.Contains(err.Error(), "no files match") {
		t.Fatalf("err = %v", err)
	}
}

func TestLooksLikeSQLState(t *testing.T) {
	for s, want := range map[string]bool{"42P01": true, "XX000": true, "22012": true, "ERROR": false, "42p01": false, "4201": false} {
		if looksLikeSQLState(s) != want {
			t.Errorf("looksLikeSQLState(%q) != %v", s, want)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"1s": time.Second, "250ms": 250 * time.Millisecond, "1m30s": 90 * time.Second,
		"5sec": 5 * time.Second, "2min": 2 * time.Minute, "1day": 24 * time.Hour, "3millis": 3 * time.Millisecond,
	} {
		if got, err := parseDuration(s); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "s", "1parsec", "abc"} {
		if _, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q) accepted", s)
		}
	}
}

func TestResultsMatch(t *testing.T) {
	rows := [][]string{{"1", "a  b"}, {"2", "NULL"}}
	if !resultsMatch(rows, []string{"1 a b", "2\tNULL"}) {
		t.Error("normalised rows do not match")
	}
	if resultsMatch(rows, []string{"1 a b"}) {
		t.Error("row count ignored")
	}
	if !resultsMatch(rows, []string{"1 <slt:ignore>", "2 NULL"}) {
		t.Error("ignore marker not honoured")
	}
	if resultsMatch(rows, []string{"<slt:ignore> 3"}) {
		t.Error("ignore marker matched a missing fragment")
	}
	sorted := sortRows([][]string{{"b", "1"}, {"a", "2"}, {"a", "10"}}, RowSort)
	if got := strings.Join(rowLines(sorted), "|"); got != "a 10|a 2|b 1" {
		t.Errorf("rowsort = %s", got)
	}
	vs := sortRows([][]string{{"b", "1"}, {"a", "2"}}, ValueSort)
	if got := strings.Join(rowLines(vs), "|"); got != "1|2|a|b" {
		t.Errorf("valuesort = %s", got)
	}
}

func TestLineDiff(t *testing.T) {
	got := lineDiff([]string{"1", "2", "3"}, []string{"1", "3", "4"})
	want := "    1\n-   2\n    3\n+   4\n"
	if got != want {
		t.Errorf("lineDiff =\n%s\nwant\n%s", got, want)
	}
}
