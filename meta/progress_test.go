package meta

import (
	"sync"
	"testing"
	"time"

	"streamdb/exec"
)

// fakePositions stands for the runtime's committed source positions.
type fakePositions struct {
	mu  sync.Mutex
	pos []exec.ViewPosition
}

func (f *fakePositions) get() []exec.ViewPosition {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]exec.ViewPosition(nil), f.pos...)
}

func (f *fakePositions) set(view uint32, source int, seq uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.pos {
		if f.pos[i].ViewID == view && f.pos[i].Source == source {
			f.pos[i].Seq = seq
		}
	}
}

// TestJobsProgress: a job counts the messages its views read since it
// began toward its targets (a subject pattern's target is the newest of
// the subjects it covers), ignores other views and reads past the
// target, and is listed from Register to End.
func TestJobsProgress(t *testing.T) {
	f := &fakePositions{pos: []exec.ViewPosition{
		{ViewID: 1, Source: 0, Subject: "orders", Seq: 10},
		{ViewID: 1, Source: 1, Subject: "events.*", Seq: 0},
		{ViewID: 2, Source: 0, Subject: "orders", Seq: 0}, // not the job's
	}}
	js := NewJobs(f.get)
	targets := map[string]uint64{"orders": 110, "events.a": 40, "events.b": 50}
	j := js.New("backfill of v", []uint32{1}, targets)
	if got := js.List(); len(got) != 0 {
		t.Fatalf("a job is listed before Register: %v", got)
	}
	p := js.Progress(j)
	if p.Total != 150 || p.Read != 0 || p.Percent() != 0 {
		t.Fatalf("at the start: %+v", p)
	}
	f.set(1, 0, 60)
	f.set(1, 1, 70) // past its target: counts up to it
	f.set(2, 0, 100)
	p = js.Progress(j)
	if p.Read != 100 || p.Total != 150 || p.Rate <= 0 || p.Left <= 0 {
		t.Fatalf("part way: %+v", p)
	}
	if pc := p.Percent(); pc < 66 || pc > 67 {
		t.Errorf("percent %v, want 66.7", pc)
	}

	js.Register(j)
	later := js.New("replay", []uint32{2}, targets)
	later.Started = j.Started.Add(time.Second)
	js.Register(later)
	if got := js.List(); len(got) != 2 || got[0] != j || got[1] != later {
		t.Fatalf("List: %v", got)
	}
	js.End(j)
	js.End(nil)
	if got := js.List(); len(got) != 1 || got[0] != later {
		t.Fatalf("List after End: %v", got)
	}
	// A job with nothing to read is done.
	if p := js.Progress(js.New("nothing", []uint32{3}, targets)); p.Total != 0 || p.Percent() != 100 {
		t.Errorf("an empty job: %+v", p)
	}
}
