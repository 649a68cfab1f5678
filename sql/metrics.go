package sql

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"streamdb/catalog"
	"streamdb/metrics"
)

// RegisterMetrics adds the engine's per-view and per-stream figures to
// the metrics registry; they are computed when scraped. Call it once.
func (e *Engine) RegisterMetrics() {
	metrics.Registry.MustRegister(&viewCollector{e: e})
}

var (
	sourceLagDesc = prometheus.NewDesc("streamdb_source_lag_messages",
		"JetStream messages of a view's input stream past what the view's newest committed epoch has read.",
		[]string{"view", "stream"}, nil)
	sourcePositionDesc = prometheus.NewDesc("streamdb_source_position",
		"JetStream stream sequence of the last message of a view's input stream that the view's newest committed epoch has read (its rate is the messages the view reads per second).",
		[]string{"view", "stream"}, nil)
	viewFreshnessDesc = prometheus.NewDesc("streamdb_view_freshness_seconds",
		"Age of the oldest input message a view has not yet committed (0 when it has read everything).",
		[]string{"view"}, nil)
	sourceMalformedDesc = prometheus.NewDesc("streamdb_source_malformed_total",
		"Messages of a stream skipped because they could not be decoded (the most any reader of it skipped).",
		[]string{"stream"}, nil)
	sourceNoColumnDesc = prometheus.NewDesc("streamdb_source_no_column_messages_total",
		"Messages of a stream none of whose fields names one of its columns, so that they read as rows of NULLs (the most any reader of it counted since the server started).",
		[]string{"stream"}, nil)
	sourceUnmatchedKeyDesc = prometheus.NewDesc("streamdb_source_unmatched_key_messages_total",
		"Messages of a stream with a member key that none of its columns matches, so that the member is dropped, by key (the most any reader of it counted since it started; streamdb_streams lists them).",
		[]string{"stream", "key"}, nil)
	sourceNeverSeenDesc = prometheus.NewDesc("streamdb_source_never_seen_columns",
		"Columns of a stream read from message members that no message its readers decoded since they started had (streamdb_streams names them).",
		[]string{"stream"}, nil)
	sourceAlignmentWaitDesc = prometheus.NewDesc("streamdb_source_alignment_wait_seconds_total",
		"Time the readers of a stream with a WATERMARK held their input because they were more than scan.watermark.alignment.max-drift ahead in event time of another watermarked input of their views.",
		[]string{"stream"}, nil)
	viewRowErrorsDesc = prometheus.NewDesc("streamdb_view_row_errors_total",
		"Rows a view skipped because an expression failed on them (streamdb_view_errors lists the latest).",
		[]string{"view"}, nil)
	operatorStateDesc = prometheus.NewDesc("streamdb_operator_state_bytes",
		"Pebble's estimate of the disk size of a view operator's state tables (as streamdb_operators shows them).",
		[]string{"view", "operator"}, nil)
	operatorCacheHitsDesc = prometheus.NewDesc("streamdb_operator_cache_hits_total",
		"Lookups of a view operator's state cache answered from memory.",
		[]string{"view", "operator"}, nil)
	operatorCacheReadsDesc = prometheus.NewDesc("streamdb_operator_cache_reads_total",
		"Lookups of a view operator's state cache that read Pebble (a miss of a key Pebble may hold).",
		[]string{"view", "operator"}, nil)
)

// viewCollector reads lag and freshness from the runtime's committed
// positions and JetStream's stream states at scrape time.
type viewCollector struct{ e *Engine }

func (c *viewCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- sourceLagDesc
	ch <- sourcePositionDesc
	ch <- viewFreshnessDesc
	ch <- sourceMalformedDesc
	ch <- sourceNoColumnDesc
	ch <- sourceUnmatchedKeyDesc
	ch <- sourceNeverSeenDesc
	ch <- sourceAlignmentWaitDesc
	ch <- viewRowErrorsDesc
	ch <- operatorStateDesc
	ch <- operatorCacheHitsDesc
	ch <- operatorCacheReadsDesc
}

func (c *viewCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.e
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	now := time.Now()
	lastSeq := map[string]uint64{} // by JetStream stream, one lookup per scrape
	oldest := map[string]time.Time{}
	// A view that reads a stream twice (a self-join) has a reader, and a
	// position, per scan: its lag is the slowest reader's.
	lags := map[[2]string]uint64{}
	positions := map[[2]string]uint64{} // the slowest reader's, as lags
	for _, p := range e.rt.Positions() {
		src, ok := e.lookup(p.Stream)
		if !ok || src.JSStream == "" || (src.Kind != catalog.KindStream && src.Kind != catalog.KindTable) {
			continue
		}
		last, seen := lastSeq[src.JSStream]
		if !seen {
			var err error
			if last, err = e.streams.Last(ctx, src); err != nil {
				continue
			}
			lastSeq[src.JSStream] = last
		}
		lag := uint64(0)
		if last > p.Seq {
			lag = last - p.Seq
		}
		key := [2]string{p.View, p.Stream}
		lags[key] = max(lags[key], lag)
		if pos, ok := positions[key]; !ok || p.Seq < pos {
			positions[key] = p.Seq
		}
		if _, ok := oldest[p.View]; !ok {
			oldest[p.View] = time.Time{}
		}
		if lag == 0 {
			continue
		}
		if t, err := e.streams.MsgTime(ctx, src, p.Seq+1); err == nil {
			if o := oldest[p.View]; o.IsZero() || t.Before(o) {
				oldest[p.View] = t
			}
		}
	}
	for key, lag := range lags {
		ch <- prometheus.MustNewConstMetric(sourceLagDesc, prometheus.GaugeValue, float64(lag), key[0], key[1])
	}
	for key, pos := range positions {
		ch <- prometheus.MustNewConstMetric(sourcePositionDesc, prometheus.GaugeValue, float64(pos), key[0], key[1])
	}
	for view, t := range oldest {
		age := 0.0
		if !t.IsZero() {
			age = max(0, now.Sub(t).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(viewFreshnessDesc, prometheus.GaugeValue, age, view)
	}
	for stream, n := range e.rt.SkippedMessages() {
		ch <- prometheus.MustNewConstMetric(sourceMalformedDesc, prometheus.CounterValue, float64(n), stream)
	}
	for stream, n := range e.rt.NoColumnMessages() {
		ch <- prometheus.MustNewConstMetric(sourceNoColumnDesc, prometheus.CounterValue, float64(n), stream)
	}
	keyStats := e.rt.StreamKeyStats()
	for _, d := range e.objects(catalog.KindStream) {
		st, ok := keyStats[d.Name]
		if !ok {
			continue
		}
		rep := memberReport(d, st)
		for _, k := range rep.unmatched {
			ch <- prometheus.MustNewConstMetric(sourceUnmatchedKeyDesc, prometheus.CounterValue, float64(k.Messages), d.Name, k.Key)
		}
		ch <- prometheus.MustNewConstMetric(sourceNeverSeenDesc, prometheus.GaugeValue, float64(len(rep.neverSeen)), d.Name)
	}
	for stream, d := range e.rt.AlignmentWaits() {
		ch <- prometheus.MustNewConstMetric(sourceAlignmentWaitDesc, prometheus.CounterValue, d.Seconds(), stream)
	}
	rowErrors := map[string]uint64{} // ViewErrors repeats a view's count on each of its errors
	for _, ve := range e.rt.ViewErrors() {
		rowErrors[ve.View] = max(rowErrors[ve.View], ve.Count)
	}
	for view, n := range rowErrors {
		ch <- prometheus.MustNewConstMetric(viewRowErrorsDesc, prometheus.CounterValue, float64(n), view)
	}
	seen := map[[2]string]bool{} // a shared subplan lists its operator once per use
	for _, st := range e.rt.OperatorStats() {
		key := [2]string{st.View, st.Operator}
		if len(st.StateTables) == 0 || seen[key] {
			continue
		}
		seen[key] = true
		var n int64
		for _, t := range st.StateTables {
			n += e.stateTableBytes(st.ViewID, t)
		}
		ch <- prometheus.MustNewConstMetric(operatorStateDesc, prometheus.GaugeValue, float64(n), st.View, st.Operator)
		if st.Cached {
			ch <- prometheus.MustNewConstMetric(operatorCacheHitsDesc, prometheus.CounterValue, float64(st.CacheHits), st.View, st.Operator)
			ch <- prometheus.MustNewConstMetric(operatorCacheReadsDesc, prometheus.CounterValue, float64(st.CacheReads), st.View, st.Operator)
		}
	}
}
