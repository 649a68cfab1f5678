package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TotalViewRowsIn sums ViewRowsIn over every view and table: the rows
// this server's dataflows have read since it started (a cluster member's
// heartbeat turns it into rows/s).
func TotalViewRowsIn() uint64 {
	ch := make(chan prometheus.Metric, 64)
	go func() {
		ViewRowsIn.Collect(ch)
		close(ch)
	}()
	var sum float64
	for m := range ch {
		var d dto.Metric
		if m.Write(&d) == nil && d.Counter != nil {
			sum += d.Counter.GetValue()
		}
	}
	return uint64(sum)
}
