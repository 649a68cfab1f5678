package sql

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"streamdb/meta"
)

// TestAlterSavepointName: the savepoint an ALTER takes is a valid
// savepoint name and a plain lower-case identifier, also for long or
// quoted view names, so the ROLLBACK TO SAVEPOINT its NOTICE suggests
// parses unquoted.
func TestAlterSavepointName(t *testing.T) {
	ident := regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	for _, view := range []string{"totals", "Daily Totals", strings.Repeat("v", 63), "über.view"} {
		at := time.Date(2026, 12, 2, 3, 4, 5, 6000, time.UTC)
		name := alterSavepointName(view, at)
		if err := meta.ValidPointName(name); err != nil {
			t.Errorf("view %q: %v", view, err)
		}
		if !ident.MatchString(name) {
			t.Errorf("view %q: savepoint %q is not a plain identifier", view, name)
		}
		if next := alterSavepointName(view, at.Add(time.Microsecond)); next == name {
			t.Errorf("view %q: ALTERs a microsecond apart both take savepoint %q", view, name)
		}
	}
}
