package meta

import (
	"maps"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// The WITH options that choose what JetStream keeps of a source (the
// purge, purge.go, applies them):
//
//   - history (tables): how far back the table's changelog is kept,
//     whatever else has read it, as an interval ('7 days'); unset keeps
//     only what restores and views still need.
//   - retention (streams): 'limits' (the default) leaves the stream's
//     messages to its JetStream limits, which are the producers' choice;
//     'consumed' also purges what every view and every retained
//     checkpoint and savepoint has read.
const (
	OptHistory   = "history"
	OptRetention = "retention"

	RetentionLimits   = "limits"
	RetentionConsumed = "consumed"
)

// CheckRetentionOptions checks the history and retention options of a
// CREATE TABLE (isTable) or CREATE STREAM, and normalises retention's
// value in opts.
func CheckRetentionOptions(opts map[string]string, isTable bool) error {
	if v, ok := opts[OptHistory]; ok {
		if !isTable {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option history applies to tables only").
				WithHint("A stream keeps what its JetStream limits keep; use WITH (retention = 'consumed') to purge what every view has read.")
		}
		if _, err := ParseHistory(v); err != nil {
			return err
		}
	}
	if v, ok := opts[OptRetention]; ok {
		if isTable {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option retention applies to streams only").
				WithHint("A table's changelog is purged below what its views and retained checkpoints need; WITH (history = '7 days') keeps more of it.")
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if v != RetentionLimits && v != RetentionConsumed {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for option retention: %q", opts[OptRetention]).
				WithHint("Valid values are 'limits' and 'consumed'.")
		}
		opts[OptRetention] = v
	}
	return nil
}

// AlterRetentionOptions returns cur with the options of set given and
// those of reset removed (ALTER TABLE ... SET (...) / RESET (...)),
// checked as CheckRetentionOptions checks them; nil when none is left.
// Only history and retention can change; cur is not modified.
func AlterRetentionOptions(cur, set map[string]string, reset []string, isTable bool) (map[string]string, error) {
	opts := maps.Clone(cur)
	if opts == nil {
		opts = map[string]string{}
	}
	for k, v := range set {
		if k != OptHistory && k != OptRetention {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option %q cannot be changed by ALTER TABLE", k).
				WithHint("ALTER TABLE ... SET changes history (tables) and retention (streams).")
		}
		opts[k] = v
	}
	for _, k := range reset {
		if k != OptHistory && k != OptRetention {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "option %q cannot be changed by ALTER TABLE", k).
				WithHint("ALTER TABLE ... RESET changes history (tables) and retention (streams).")
		}
		delete(opts, k)
	}
	if err := CheckRetentionOptions(opts, isTable); err != nil {
		return nil, err
	}
	if len(opts) == 0 {
		return nil, nil
	}
	return opts, nil
}

// ParseHistory reads a history option: an interval of at least zero, of
// fixed length (a month counts as 30 days, as PostgreSQL's
// extract(epoch ...) counts it).
func ParseHistory(v string) (time.Duration, error) {
	d, err := types.ParseInterval(v)
	if err != nil {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for option history: %q is not an interval", v).
			WithHint("Give an interval such as '7 days' or '12 hours'.")
	}
	const maxMicros = int64(1<<63-1) / 1000 / 2 // within time.Duration's range
	tooLong := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for option history: %q is too long", v).
		WithHint("Keep at most 200 years.")
	if abs64(int64(d.Months)) > 12*200 || abs64(int64(d.Days)) > 365*200 || abs64(d.I) > maxMicros {
		return 0, tooLong
	}
	micros := (int64(d.Months)*30+int64(d.Days))*24*3600*1e6 + d.I
	if micros < 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for option history: %q is negative", v)
	}
	if micros > maxMicros {
		return 0, tooLong
	}
	return time.Duration(micros) * time.Microsecond, nil
}

// KeepsHistoryAt reports whether d is a table that keeps its changelog
// back to at, as of now: its history window covers at, and it existed
// then.
func KeepsHistoryAt(d *catalog.Descriptor, at, now time.Time) bool {
	if d.Kind != catalog.KindTable {
		return false
	}
	h, ok := d.Options[OptHistory]
	if !ok {
		return false
	}
	w, err := ParseHistory(h)
	if err != nil {
		return false
	}
	return !at.Before(d.CreatedAt) && !at.Before(now.Add(-w))
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
