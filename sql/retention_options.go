package sql

import (
	"strings"
	"time"

	"streamdb/sqlerr"
	"streamdb/types"
)

// The WITH options that choose what JetStream keeps of a source
// (retention.go):
//
//   - history (tables): how far back the table's changelog is kept,
//     whatever else has read it, as an interval ('7 days'); unset keeps
//     only what restores and views still need.
//   - retention (streams): 'limits' (the default) leaves the stream's
//     messages to its JetStream limits, which are the producers' choice;
//     'consumed' also purges what every view and every retained
//     checkpoint and savepoint has read.
const (
	optHistory   = "history"
	optRetention = "retention"

	retentionLimits   = "limits"
	retentionConsumed = "consumed"
)

// checkRetentionOptions checks the history and retention options of a
// CREATE TABLE (isTable) or CREATE STREAM, and normalises retention's
// value in opts.
func checkRetentionOptions(opts map[string]string, isTable bool) error {
	if v, ok := opts[optHistory]; ok {
		if !isTable {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option history applies to tables only").
				WithHint("A stream keeps what its JetStream limits keep; use WITH (retention = 'consumed') to purge what every view has read.")
		}
		if _, err := parseHistory(v); err != nil {
			return err
		}
	}
	if v, ok := opts[optRetention]; ok {
		if isTable {
			return sqlerr.New(sqlerr.InvalidParameterValue, "option retention applies to streams only").
				WithHint("A table's changelog is purged below what its views and retained checkpoints need; WITH (history = '7 days') keeps more of it.")
		}
		v = strings.ToLower(strings.TrimSpace(v))
		if v != retentionLimits && v != retentionConsumed {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for option retention: %q", opts[optRetention]).
				WithHint("Valid values are 'limits' and 'consumed'.")
		}
		opts[optRetention] = v
	}
	return nil
}

// parseHistory reads a history option: an interval of at least zero, of
// fixed length (a month counts as 30 days, as PostgreSQL's
// extract(epoch ...) counts it).
func parseHistory(v string) (time.Duration, error) {
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

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
