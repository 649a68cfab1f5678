package expr

import (
	"testing"
	"time"

	"streamdb/types"
)

// TestToChar: the template patterns give what PostgreSQL 15's to_char
// gives for the same timestamp (in UTC).
func TestToChar(t *testing.T) {
	ts := types.NewTime(time.Date(2024, 3, 5, 14, 7, 9, 123456000, time.UTC))
	for _, c := range []struct {
		format, want string
		zone         bool
	}{
		{"YYYY-MM-DD HH24:MI:SS TZ", "2024-03-05 14:07:09 UTC", true},
		{"YYYY-MM-DD HH24:MI:SS TZ", "2024-03-05 14:07:09 ", false},
		{"HH12:MI AM, MS US", "02:07 PM, 123 123456", false},
		{"Mon MON mon|Month|Dy DAY|DDD YY", "Mar MAR mar|March    |Tue TUESDAY  |065 24", false},
		{`"Week of" DD.MM. tz`, "Week of 05.03. utc", true},
		{"FMDD FMMonth YYYY, FMHH12 am", "5 March 2024, 2 pm", false},
	} {
		if got := formatToChar(ts, c.format, c.zone); got != c.want {
			t.Errorf("to_char(%q) = %q, want %q", c.format, got, c.want)
		}
	}
}
