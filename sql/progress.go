package sql

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"streamdb/catalog"
	"streamdb/config"
	"streamdb/exec"
	"streamdb/pgwire"
	"streamdb/types"
)

// A progressJob is a long wait whose progress the server reports: a
// CREATE MATERIALIZED VIEW's backfill, or the replay after a start or a
// rollback (replay_progress.go). Every execution.progress.interval
// it is logged and sent to the client as a NOTICE, and streamdb_progress
// lists it while it runs.
type progressJob struct {
	what    string
	ids     []uint32
	targets map[string]uint64 // subject -> sequence to reach
	started time.Time
	// start is each (view, source) position when the wait began; progress
	// counts messages read since, toward the targets.
	start map[positionKey]uint64
}

type positionKey struct {
	view   uint32
	source int
}

// progressJobs are the jobs running now.
type progressJobs struct {
	mu   sync.Mutex
	jobs map[*progressJob]struct{}
}

// backfillPrefix starts the description of a view's backfill wait.
const backfillPrefix = "backfill of "

// startJob registers the wait for ids to reach targets as a job if it is a
// backfill; other waits (reads of acknowledged writes, FLUSH) are short
// and only logged. It returns nil for those.
func (e *Engine) startJob(what string, ids []uint32, targets map[string]uint64) *progressJob {
	if !strings.HasPrefix(what, backfillPrefix) {
		return nil
	}
	j := e.newJob(what, ids, targets)
	e.registerJob(j)
	return j
}

// newJob starts measuring the progress of ids toward targets from their
// positions now.
func (e *Engine) newJob(what string, ids []uint32, targets map[string]uint64) *progressJob {
	j := &progressJob{what: what, ids: ids, targets: targets, started: time.Now(), start: map[positionKey]uint64{}}
	for _, p := range e.rt.Positions() {
		if slices.Contains(ids, p.ViewID) {
			j.start[positionKey{p.ViewID, p.Source}] = p.Seq
		}
	}
	return j
}

// registerJob lists j in streamdb_progress until endJob.
func (e *Engine) registerJob(j *progressJob) {
	e.jobs.mu.Lock()
	if e.jobs.jobs == nil {
		e.jobs.jobs = map[*progressJob]struct{}{}
	}
	e.jobs.jobs[j] = struct{}{}
	e.jobs.mu.Unlock()
}

func (e *Engine) endJob(j *progressJob) {
	if j == nil {
		return
	}
	e.jobs.mu.Lock()
	delete(e.jobs.jobs, j)
	e.jobs.mu.Unlock()
}

// jobProgress is a job's progress at one moment.
type jobProgress struct {
	read, total uint64
	rate        float64       // messages per second since the job started
	left        time.Duration // at that rate; 0 when unknown
}

func (e *Engine) progressOf(j *progressJob) jobProgress {
	var p jobProgress
	for _, pos := range e.rt.Positions() {
		from, ok := j.start[positionKey{pos.ViewID, pos.Source}]
		if !ok {
			continue
		}
		to := exec.SubjectTarget(j.targets, pos.Subject)
		if to <= from {
			continue
		}
		p.total += to - from
		if cur := min(pos.Seq, to); cur > from {
			p.read += cur - from
		}
	}
	if secs := time.Since(j.started).Seconds(); secs > 0 {
		p.rate = float64(p.read) / secs
	}
	if p.rate > 0 && p.total > p.read {
		p.left = time.Duration(float64(p.total-p.read) / p.rate * float64(time.Second))
	}
	return p
}

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
	p := e.progressOf(j)
	msg := fmt.Sprintf("%s: %d of %d messages read (%.0f%%), %.0f messages/s", what, p.read, p.total, percent(p), p.rate)
	if p.left > 0 {
		msg += fmt.Sprintf(", about %s left", p.left.Round(time.Second))
	}
	e.log.Info("progress", "for", what, "read", p.read, "total", p.total, "rate", int64(p.rate), "left", p.left.Round(time.Second),
		"behind", e.rt.WaitReport(j.ids, j.targets).String())
	pgwire.Notice(ctx, msg, "")
}

func percent(p jobProgress) float64 {
	if p.total == 0 {
		return 100
	}
	return 100 * float64(p.read) / float64(p.total)
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
		e.jobs.mu.Lock()
		jobs := make([]*progressJob, 0, len(e.jobs.jobs))
		for j := range e.jobs.jobs {
			jobs = append(jobs, j)
		}
		e.jobs.mu.Unlock()
		var rows []types.Row
		for _, j := range jobs {
			p := e.progressOf(j)
			left := types.Null
			if p.left > 0 {
				left = types.NewFloat(p.left.Seconds())
			}
			rows = append(rows, types.Row{types.NewString(j.what), types.NewTime(j.started),
				types.NewInt(int64(p.read)), types.NewInt(int64(p.total)), types.NewFloat(percent(p)),
				types.NewFloat(p.rate), left})
		}
		return rows
	}
}
