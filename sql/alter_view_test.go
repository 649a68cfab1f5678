package sql

import (
	"regexp"
	"strings"
	"testing"

	"streamdb/checkpoint"
)

// TestAlterSavepointName: the savepoint an ALTER takes is a valid
// savepoint name and a plain lower-case identifier, also for long or
// quoted view names, so the ROLLBACK TO SAVEPOINT its NOTICE suggests
// parses unquoted.
func TestAlterSavepointName(t *testing.T) {
	ident := regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)
	for _, view := range []string{"totals", "Daily Totals", strings.Repeat("v", 63), "über.view"} {
		name := alterSavepointName(view)
		if err := checkpoint.CheckSavepointName(name); err != nil {
			t.Errorf("view %q: %v", view, err)
		}
		if !ident.MatchString(name) {
			t.Errorf("view %q: savepoint %q is not a plain identifier", view, name)
		}
	}
}
