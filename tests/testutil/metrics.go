package testutil

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// Metrics scrapes the server's /metrics and parses the Prometheus text
// format, by metric name.
func (s *Server) Metrics(t testing.TB) map[string]*dto.MetricFamily {
	t.Helper()
	return s.MetricsAs(t, "", "")
}

// MetricsAs is Metrics logged in as user with password (HTTP Basic), as
// a server with a password asks of every scrape; user "" sends none.
func (s *Server) MetricsAs(t testing.TB, user, password string) map[string]*dto.MetricFamily {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.HTTPURL()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("testutil: GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("testutil: GET /metrics: status %d, %v: %s", resp.StatusCode, err, body)
	}
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("testutil: parsing /metrics: %v", err)
	}
	return fams
}

// EpochsCommitted is how many epochs the server has committed since it
// started (streamdb_epochs_committed_total).
func (s *Server) EpochsCommitted(t testing.TB) uint64 {
	t.Helper()
	f, ok := s.Metrics(t)["streamdb_epochs_committed_total"]
	if !ok || len(f.GetMetric()) == 0 {
		t.Fatal("testutil: /metrics has no streamdb_epochs_committed_total")
	}
	return uint64(f.GetMetric()[0].GetCounter().GetValue())
}

// WaitEpochs waits until the server has committed n more epochs than when
// it was called: the state-based way to let barriers pass (every epoch
// committed after a write that landed holds it; a paused view that stays
// the same over n epochs did not move).
func (s *Server) WaitEpochs(t testing.TB, n uint64) {
	t.Helper()
	start := s.EpochsCommitted(t)
	Poll(t, 2*time.Minute, fmt.Sprintf("%d more epochs committed", n), func() error {
		if got := s.EpochsCommitted(t); got < start+n {
			return fmt.Errorf("%d of %d epochs so far", got-start, n)
		}
		return nil
	})
}

// MetricValue is the value of an unlabelled counter or gauge, or of the
// series whose labels include every name=value pair given (a histogram's
// sample count).
func MetricValue(t testing.TB, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("/metrics has no %s", name)
	}
	for _, m := range f.GetMetric() {
		if !HasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	t.Fatalf("/metrics has no %s with labels %v", name, labels)
	return 0
}

// HasLabels reports whether m carries every name=value pair given.
func HasLabels(m *dto.Metric, pairs []string) bool {
	for i := 0; i+1 < len(pairs); i += 2 {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == pairs[i] && l.GetValue() == pairs[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}
