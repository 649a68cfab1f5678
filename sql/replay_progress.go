package sql

import (
	"context"
	"time"

	"streamdb/meta"
)

// trackReplay reports the replay that follows a start or a ROLLBACK TO:
// every view and table resumes from the positions of its last committed
// epoch and re-reads what came after. While they are behind the ends their
// inputs had when it began, the replay is a job in streamdb_progress and
// logs its progress every execution.progress.interval; it logs once more
// when done. It runs in the background and ends with the server.
func (e *Engine) trackReplay(what string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids []uint32
	seen := map[uint32]bool{}
	for _, p := range e.rt.Positions() {
		if !seen[p.ViewID] {
			seen[p.ViewID] = true
			ids = append(ids, p.ViewID)
		}
	}
	if len(ids) == 0 {
		return
	}
	var targets map[string]uint64
	err := meta.RetryRequest(ctx, func(ctx context.Context) (err error) {
		targets, err = e.rt.Targets(ctx, ids)
		return err
	})
	if err != nil {
		e.log.Warn("cannot report the replay's progress: reading the ends of the inputs failed", "replay", what, "err", err)
		return
	}
	j := e.jobs.New(what, ids, targets)
	if p := e.jobs.Progress(j); p.Total == 0 {
		return // nothing to replay
	}
	e.jobs.Register(j)
	e.log.Info("replay started", "replay", what, "messages", e.jobs.Progress(j).Total)
	go func() {
		defer e.endJob(j)
		tick := time.NewTicker(e.progressInterval())
		defer tick.Stop()
		for range tick.C {
			if e.streams.Closed() {
				return
			}
			p := e.jobs.Progress(j)
			if p.Read >= p.Total {
				e.log.Info("replay done", "replay", what, "messages", p.Total, "seconds", time.Since(j.Started).Round(time.Millisecond).Seconds())
				return
			}
			e.reportProgress(context.Background(), what, j, targets)
		}
	}()
}
