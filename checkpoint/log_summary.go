package checkpoint

import (
	"log/slog"
	"time"
)

// summaryEvery is how often the log gets one info line about the periodic
// checkpoints completed since the previous one (each is logged at debug).
const summaryEvery = time.Minute

// periodicSummary collects the periodic checkpoints completed since the
// last summary line.
type periodicSummary struct {
	since    time.Time // start of the current summary period
	count    int
	duration time.Duration // sum
	newBytes int64
	last     *Meta
}

func (p *periodicSummary) note(m *Meta) {
	p.count++
	p.duration += time.Duration(m.Duration)
	p.newBytes += m.NewBytes
	p.last = m
}

// logDue writes the summary line if a period has passed since the last one
// and some periodic checkpoint completed in it, then starts a new period.
func (p *periodicSummary) logDue(log *slog.Logger, now time.Time) {
	if p.since.IsZero() {
		p.since = now
	}
	if now.Sub(p.since) < summaryEvery || p.count == 0 {
		return
	}
	log.Info("periodic checkpoints", "completed", p.count, "period", now.Sub(p.since).Round(time.Second),
		"mean_duration", (p.duration / time.Duration(p.count)).Round(time.Microsecond),
		"new_bytes", p.newBytes, "latest_id", p.last.ID, "latest_epoch", p.last.Epoch, "latest_size", p.last.SizeBytes)
	*p = periodicSummary{since: now}
}
