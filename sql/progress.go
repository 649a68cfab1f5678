package sql

import (
	"context"
	"fmt"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/config"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/types"
)

// Long waits report their progress: a backfill or a replay is a
// meta.Job (listed in streamdb_progress while it runs), other waits
// (reads of acknowledged writes, FLUSH) are short and only logged.

// backfillPrefix starts the description of a view's backfill wait.
const backfillPrefix = "backfill of "

// progressJob is a wait that startJob made a job, or nil.
type progressJob = meta.Job

// startJob registers the wait for ids to reach targets as a job if it is a
// backfill; other waits are only logged. It returns nil for those.
func (e *Engine) startJob(what string, ids []uint32, targets map[string]uint64) *progressJob {
	if !strings.HasPrefix(what, backfillPrefix) {
		return nil
	}
	j := e.jobs.New(what, ids, targets)
	e.jobs.Register(j)
	return j
}

// endJob ends what startJob started (nothing for nil).
func (e *Engine) endJob(j *progressJob) { e.jobs.End(j) }

// progressInterval is how often long waits report.
func (e *Engine) progressInterval() time.Duration {
	d, err := config.ParseDuration(e.setting(config.ExecutionProgressInterval))
	if err != nil || d <= 0 {
		return 5 * time.Second
	}
	return d
}

// reportProgress logs a long wait's progress and tells the client with a
// NOTICE: a job's progress, or for other waits (FLUSH) which views are
// behind and where their readers and barriers are (exec.WaitReport).
func (e *Engine) reportProgress(ctx context.Context, what string, j *progressJob, targets map[string]uint64) {
	if j == nil {
		w := e.rt.WaitReport(nil, targets)
		e.log.Info("waiting", "for", what, "targets", fmt.Sprint(targets), "committed_epoch", e.rt.CommittedEpoch(), "behind", w.String())
		pgwire.Notice(ctx, fmt.Sprintf("%s is still waiting: %s", what, w.String()), "")
		return
	}
	p := e.jobs.Progress(j)
	msg := fmt.Sprintf("%s: %d of %d messages read (%.0f%%), %.0f messages/s", what, p.Read, p.Total, p.Percent(), p.Rate)
	if p.Left > 0 {
		msg += fmt.Sprintf(", about %s left", p.Left.Round(time.Second))
	}
	e.log.Info("progress", "for", what, "read", p.Read, "total", p.Total, "rate", int64(p.Rate), "left", p.Left.Round(time.Second),
		"behind", e.rt.WaitReport(j.IDs, j.Targets).String())
	pgwire.Notice(ctx, msg, "")
}

var progressColumns = []types.Column{
	{Name: "job", Type: types.Text},
	{Name: "started", Type: types.Timestamptz},
	{Name: "messages_read", Type: types.Int8},
	{Name: "messages_total", Type: types.Int8},
	{Name: "percent", Type: types.Float8},
	{Name: "messages_per_second", Type: types.Float8},
	{Name: "seconds_left", Type: types.Float8},
}

// progressTable is streamdb_progress: the backfills running now.
func (e *Engine) progressTable() (*catalog.Descriptor, func() []types.Row) {
	d := &catalog.Descriptor{Name: sysTableProgress, Kind: catalog.KindSystem, Columns: catalog.ColumnsFrom(progressColumns)}
	return d, func() []types.Row {
		var rows []types.Row
		for _, j := range e.jobs.List() {
			p := e.jobs.Progress(j)
			left := types.Null
			if p.Left > 0 {
				left = types.NewFloat(p.Left.Seconds())
			}
			rows = append(rows, types.Row{types.NewString(j.What), types.NewTime(j.Started),
				types.NewInt(int64(p.Read)), types.NewInt(int64(p.Total)), types.NewFloat(p.Percent()),
				types.NewFloat(p.Rate), left})
		}
		return rows
	}
}
