package meta

import (
	"slices"
	"sync"
	"time"

	"streamdb/exec"
)

// A Job is a long wait whose progress the server reports: a CREATE
// MATERIALIZED VIEW's backfill, or the replay after a start or a
// rollback. sql logs it and sends it to the client as a NOTICE every
// execution.progress.interval, and streamdb_progress lists it while it
// runs (Jobs.Register to Jobs.End).
type Job struct {
	What    string
	IDs     []uint32
	Targets map[string]uint64 // subject -> sequence to reach
	Started time.Time
	// start is each (view, source) position when the wait began; progress
	// counts messages read since, toward the targets.
	start map[positionKey]uint64
}

type positionKey struct {
	view   uint32
	source int
}

// Jobs are the jobs running now. positions reads every running view's
// committed source positions (exec.Runtime.Positions). mu is a leaf lock.
type Jobs struct {
	positions func() []exec.ViewPosition
	mu        sync.Mutex
	jobs      map[*Job]struct{}
}

// NewJobs measures jobs' progress by positions.
func NewJobs(positions func() []exec.ViewPosition) *Jobs {
	return &Jobs{positions: positions, jobs: map[*Job]struct{}{}}
}

// New starts measuring the progress of views ids toward targets from
// their positions now; the job is not listed until Register.
func (js *Jobs) New(what string, ids []uint32, targets map[string]uint64) *Job {
	j := &Job{What: what, IDs: ids, Targets: targets, Started: time.Now(), start: map[positionKey]uint64{}}
	for _, p := range js.positions() {
		if slices.Contains(ids, p.ViewID) {
			j.start[positionKey{p.ViewID, p.Source}] = p.Seq
		}
	}
	return j
}

// Register lists j (List) until End.
func (js *Jobs) Register(j *Job) {
	js.mu.Lock()
	js.jobs[j] = struct{}{}
	js.mu.Unlock()
}

// End stops listing j; a nil j is no job.
func (js *Jobs) End(j *Job) {
	if j == nil {
		return
	}
	js.mu.Lock()
	delete(js.jobs, j)
	js.mu.Unlock()
}

// List returns the jobs listed now, oldest first.
func (js *Jobs) List() []*Job {
	js.mu.Lock()
	out := make([]*Job, 0, len(js.jobs))
	for j := range js.jobs {
		out = append(out, j)
	}
	js.mu.Unlock()
	slices.SortStableFunc(out, func(a, b *Job) int { return a.Started.Compare(b.Started) })
	return out
}

// Progress is a job's progress at one moment.
type Progress struct {
	Read, Total uint64
	Rate        float64       // messages per second since the job started
	Left        time.Duration // at that rate; 0 when unknown
}

// Percent is how much of the job is done, 100 when it had nothing to do.
func (p Progress) Percent() float64 {
	if p.Total == 0 {
		return 100
	}
	return 100 * float64(p.Read) / float64(p.Total)
}

// Progress measures j now: messages its views read since it began,
// toward its targets.
func (js *Jobs) Progress(j *Job) Progress {
	var p Progress
	for _, pos := range js.positions() {
		from, ok := j.start[positionKey{pos.ViewID, pos.Source}]
		if !ok {
			continue
		}
		to := exec.SubjectTarget(j.Targets, pos.Subject)
		if to <= from {
			continue
		}
		p.Total += to - from
		if cur := min(pos.Seq, to); cur > from {
			p.Read += cur - from
		}
	}
	if secs := time.Since(j.Started).Seconds(); secs > 0 {
		p.Rate = float64(p.Read) / secs
	}
	if p.Rate > 0 && p.Total > p.Read {
		p.Left = time.Duration(float64(p.Total-p.Read) / p.Rate * float64(time.Second))
	}
	return p
}
