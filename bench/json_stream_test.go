package bench

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// jsonVariant is one side of a JSON stream comparison: a stream ev, a
// view over it whose sum(n) counts the events, and the events.
type jsonVariant struct {
	name   string
	stream string
	view   string
	event  func(k, v int64) []byte
}

// jsonPair compares two variants over the same events (issue 40's
// targets), side by side in one run in the order base, other, other,
// base, each a fresh server: views created on the empty stream, ALTER
// SYSTEM PAUSE, the backlog published, ALTER SYSTEM RESUME; the rate is
// events / (time from RESUME until the view counts every event).
type jsonPair struct {
	bench, subject string
	base, other    jsonVariant
	target         string
}

func (f jsonPair) run(b *testing.B, sz sizes) {
	rates := map[string][]float64{}
	for i, v := range []jsonVariant{f.base, f.other, f.other, f.base} {
		b.Run(fmt.Sprintf("run=%d/%s", i+1, v.name), func(b *testing.B) {
			rates[v.name] = append(rates[v.name], f.rate(b, i+1, v, sz))
		})
	}
	base, other := Summarize(rates[f.base.name]), Summarize(rates[f.other.name])
	for _, s := range []struct {
		name string
		sum  Stats
	}{{f.base.name, base}, {f.other.name, other}} {
		if s.sum.N > 0 {
			report.Add(f.bench, s.name, fmt.Sprintf("rate, mean of %d runs", s.sum.N), s.sum.Mean, "events/s")
		}
	}
	if base.N > 0 && other.N > 0 {
		report.Add(f.bench, f.other.name+" vs "+f.base.name, fmt.Sprintf("mean rate / mean rate (target >= %s)", f.target), other.Mean/base.Mean, "ratio")
	}
}

func (f jsonPair) rate(b *testing.B, run int, v jsonVariant, sz sizes) float64 {
	cas := fmt.Sprintf("run %d: %s", run, v.name)
	s := startServer(b, "", map[string]string{"execution.checkpointing.interval": "0"})
	defer stopServer(b, s)
	conn := s.Conn(b)
	execTimed(b, conn, v.stream)
	execTimed(b, conn, v.view)
	execTimed(b, conn, "ALTER SYSTEM PAUSE")
	m, keys := sz.backlog, sz.backlogKeys
	publishAll(b, s.NATSURL(), f.subject, m, sz.publishers, func(i int) []byte {
		return v.event(int64(i%keys)*permPrime%int64(keys), int64(i%100))
	})
	execTimed(b, conn, "ALTER SYSTEM RESUME")
	start, cpuStart := time.Now(), testutil.ProcessCPU(s.PID())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	caughtUp(ctx, b, s)
	for {
		n := queryInt(b, conn, "SELECT sum(n) FROM jv")
		if n == int64(m) {
			break
		}
		if n > int64(m) {
			b.Fatalf("the view counts %d events, only %d were published", n, m)
		}
		select {
		case <-ctx.Done():
			b.Fatalf("the view did not count the %d events in time (%d)", m, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
	d := time.Since(start)
	rate := float64(m) / d.Seconds()
	report.Add(f.bench, cas, "time until the view counts every event", d.Seconds(), "s")
	report.Add(f.bench, cas, "rate", rate, "events/s")
	report.Add(f.bench, cas, "server CPU per event while catching up", float64((testutil.ProcessCPU(s.PID())-cpuStart).Microseconds())/float64(m), "µs")
	report.Add(f.bench, cas, "machine load average (1 min) at the end", LoadAvg1(), "runnable tasks")
	b.ReportMetric(rate, "events/s")
	return rate
}

// flatKV is an event {"k": "key<k>", "v": v, "note": ...}: a text key, a
// number and a field no view reads.
func flatKV(k, v int64) []byte {
	out := make([]byte, 0, 96)
	out = append(out, `{"k":"key`...)
	out = strconv.AppendInt(out, k, 10)
	out = append(out, `","v":`...)
	out = strconv.AppendInt(out, v, 10)
	return append(out, `,"note":"padding padding padding"}`...)
}

// BenchmarkJSONBGroup is issue 40's first target: a view grouping on
// (doc->>'k') over a stream that takes each whole message as one jsonb
// column, against the same view over a flat stream of the same events
// (target >= 0.6x).
func BenchmarkJSONBGroup(b *testing.B) {
	sz := currentSizes(b)
	const subject = "bench.jsonb"
	report.Configf("jsonb group: %d events over %d keys published while paused, each {\"k\": text, \"v\": int, \"note\": text}; a flat stream (k text, v bigint) vs one jsonb column WITH (whole_message = true), the same GROUP BY view; runs in the order flat, jsonb, jsonb, flat, each a fresh server",
		sz.backlog, sz.backlogKeys)
	jsonPair{
		bench: "jsonb group", subject: subject, target: "0.6",
		base: jsonVariant{
			name:   "flat columns",
			stream: "CREATE STREAM ev (k text, v bigint) WITH (subject = '" + subject + "')",
			view:   "CREATE MATERIALIZED VIEW jv AS SELECT k, count(*) AS n, sum(v) AS total FROM ev GROUP BY k",
			event:  flatKV,
		},
		other: jsonVariant{
			name:   "jsonb doc->>'k'",
			stream: "CREATE STREAM ev (doc jsonb) WITH (subject = '" + subject + "', whole_message = true)",
			view:   "CREATE MATERIALIZED VIEW jv AS SELECT doc->>'k' AS k, count(*) AS n, sum((doc->>'v')::bigint) AS total FROM ev GROUP BY doc->>'k'",
			event:  flatKV,
		},
	}.run(b, sz)
}

// nestedKV is flatKV's values nested in a jsonb member: {"doc": {"user":
// {"id": k}, "amount": v, "note": ...}}.
func nestedKV(k, v int64) []byte {
	out := make([]byte, 0, 112)
	out = append(out, `{"doc":{"user":{"id":`...)
	out = strconv.AppendInt(out, k, 10)
	out = append(out, `},"amount":`...)
	out = strconv.AppendInt(out, v, 10)
	return append(out, `,"note":"padding padding padding"}}`...)
}

// flatUser is nestedKV's values as top-level members.
func flatUser(k, v int64) []byte {
	out := make([]byte, 0, 96)
	out = append(out, `{"user_id":`...)
	out = strconv.AppendInt(out, k, 10)
	out = append(out, `,"amount":`...)
	out = strconv.AppendInt(out, v, 10)
	return append(out, `,"note":"padding padding padding"}`...)
}

// BenchmarkGeneratedColumns is issue 40's second target: decoding typed
// columns generated from a jsonb member (user_id from doc->'user'->>'id')
// against decoding the same values as flat columns (target >= 0.8x).
// The view is one group, so that decoding is most of the work.
func BenchmarkGeneratedColumns(b *testing.B) {
	sz := currentSizes(b)
	const subject = "bench.generated"
	report.Configf("generated columns: %d events published while paused; flat {\"user_id\", \"amount\"} columns vs a jsonb member doc with user_id and amount GENERATED ALWAYS AS ((doc->'user'->>'id')::bigint) and ((doc->>'amount')::bigint); view SELECT count(*), sum(amount), max(user_id); runs in the order flat, generated, generated, flat, each a fresh server",
		sz.backlog)
	const view = "CREATE MATERIALIZED VIEW jv AS SELECT count(*) AS n, sum(amount) AS total, max(user_id) AS top FROM ev"
	jsonPair{
		bench: "generated columns", subject: subject, target: "0.8",
		base: jsonVariant{
			name:   "flat columns",
			stream: "CREATE STREAM ev (user_id bigint, amount bigint) WITH (subject = '" + subject + "')",
			view:   view, event: flatUser,
		},
		other: jsonVariant{
			name: "generated columns",
			stream: `CREATE STREAM ev (doc jsonb,
				user_id bigint GENERATED ALWAYS AS ((doc->'user'->>'id')::bigint) STORED,
				amount bigint GENERATED ALWAYS AS ((doc->>'amount')::bigint) STORED) WITH (subject = '` + subject + "')",
			view: view, event: nestedKV,
		},
	}.run(b, sz)
}
