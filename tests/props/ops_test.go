package props

import (
	"testing"
	"time"
)

// TestOperators evaluates random operators, casts and functions on edge
// inputs in streamdb and PostgreSQL, with the simple protocol (text
// results) and the extended protocol (binary results): each must give the
// same column type and value, or fail with the same SQLSTATE.
func TestOperators(t *testing.T) {
	r := propRand(t)
	n := propCases(t, 3000)
	p := startPair(t, 10*time.Minute)
	forms := opForms()
	f := &failures{t: t}
	for i := range n {
		form := forms[r.IntN(len(forms))]
		if i < len(forms) {
			form = forms[i] // every form at least once when n allows
		}
		sql := "SELECT " + form.instantiate(r)
		want := simple(t, p.ctx, p.pg, sql)
		if got := simple(t, p.ctx, p.sdb, sql); !got.sameAs(want) {
			f.add("text", sql, got, want)
			continue
		}
		if want.code != "" {
			continue
		}
		want = extended(t, p.ctx, p.pg, sql, true)
		if got := extended(t, p.ctx, p.sdb, sql, true); !got.sameAs(want) {
			f.add("binary", sql, got, want)
		}
	}
	f.done()
	t.Logf("%d expressions from %d forms", n, len(forms))
}
