package admin

import (
	dto "github.com/prometheus/client_model/go"

	"streamdb/metrics"
)

// viewMetrics are the per-view figures of the metrics registry the
// overview shows beside SQL's list of views.
type viewMetrics struct {
	freshness     map[string]float64
	lag           map[string]float64 // summed over a view's inputs
	rowsIn        map[string]float64
	rowsOut       map[string]float64
	rowErrors     map[string]float64   // rows left out because computing them failed
	streamReaders map[string][]viewLag // by stream
	// positions are the JetStream sequences each view has read of each
	// of its inputs, by {input, view}.
	positions   map[[2]string]float64
	sinkPending map[string]float64 // epochs committed, not yet published, by sink
}

type viewLag struct {
	view string
	lag  float64
}

func gatherViewMetrics() viewMetrics {
	m := viewMetrics{freshness: map[string]float64{}, lag: map[string]float64{}, rowsIn: map[string]float64{},
		rowsOut: map[string]float64{}, rowErrors: map[string]float64{}, streamReaders: map[string][]viewLag{}, sinkPending: map[string]float64{},
		positions: map[[2]string]float64{}}
	families, _ := metrics.Registry.Gather() // a partial result is still worth showing
	for _, f := range families {
		for _, s := range f.GetMetric() {
			labels := labelMap(s)
			view := labels["view"]
			switch f.GetName() {
			case "streamdb_view_freshness_seconds":
				m.freshness[view] = s.GetGauge().GetValue()
			case "streamdb_source_lag_messages":
				v := s.GetGauge().GetValue()
				m.lag[view] += v
				m.streamReaders[labels["stream"]] = append(m.streamReaders[labels["stream"]], viewLag{view, v})
			case "streamdb_source_position":
				m.positions[[2]string{labels["stream"], view}] = s.GetGauge().GetValue()
			case "streamdb_view_rows_in_total":
				m.rowsIn[view] = s.GetCounter().GetValue()
			case "streamdb_view_rows_out_total":
				m.rowsOut[view] = s.GetCounter().GetValue()
			case "streamdb_view_row_errors_total":
				m.rowErrors[view] = s.GetCounter().GetValue()
			case "streamdb_sink_pending_epochs":
				m.sinkPending[labels["sink"]] = s.GetGauge().GetValue()
			}
		}
	}
	return m
}

func labelMap(s *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range s.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}
