package meta

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/exec"
	"streamdb/sqlerr"
	"streamdb/storage"
	"streamdb/tests/testutil"
)

func TestPurgeFloor(t *testing.T) {
	tgt := purgeTarget{subject: "s", objects: []string{"ev"}}
	live := []exec.ViewPosition{{Subject: "s", Seq: 90}, {Subject: "other", Seq: 5}, {Subject: "s", Seq: 70}}
	retained := []checkpoint.Position{{Subject: "s", Seq: 60}, {Subject: "other", Seq: 1}}
	cases := []struct {
		name     string
		live     []exec.ViewPosition
		stopped  []storedPosition
		retained []checkpoint.Position
		floor    uint64
		ok       bool
	}{
		{"nothing reads the subject", nil, nil, nil, 0, false},
		{"only other subjects", live[1:2], nil, retained[1:], 0, false},
		{"lowest running view", live, nil, nil, 70, true},
		{"a retained checkpoint below the views", live, nil, retained, 60, true},
		{"a stopped view below everything", live, []storedPosition{{stream: "ev", seq: 10}, {stream: "x", seq: 1}}, retained, 10, true},
		{"a stopped view whose sources are unknown", live, []storedPosition{{stream: "", seq: 0}}, retained, 0, true},
		{"an old checkpoint without subjects, by stream name", live, nil, []checkpoint.Position{{Stream: "ev", Seq: 3}, {Stream: "x", Seq: 1}}, 3, true},
	}
	for _, c := range cases {
		floor, ok := purgeFloor(tgt, c.live, c.stopped, c.retained)
		if floor != c.floor || ok != c.ok {
			t.Errorf("%s: got %d %v, want %d %v", c.name, floor, ok, c.floor, c.ok)
		}
	}
}

func TestParseHistory(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7 days":         7 * 24 * time.Hour,
		"12 hours":       12 * time.Hour,
		"1 day -1 hour":  23 * time.Hour,
		"1 month":        30 * 24 * time.Hour,
		"0":              0,
		"90 seconds":     90 * time.Second,
		"P1DT2H":         26 * time.Hour,
		"1 mon 1 minute": 30*24*time.Hour + time.Minute,
	} {
		got, err := ParseHistory(in)
		if err != nil || got != want {
			t.Errorf("ParseHistory(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"soon", "-1 day", "1 hour -2 hours", "1000 years", "2147483647 days"} {
		if _, err := ParseHistory(in); err == nil {
			t.Errorf("ParseHistory(%q) accepted", in)
		}
	}
}

func TestCheckRetentionOptions(t *testing.T) {
	opts := map[string]string{"retention": " Consumed "}
	if err := CheckRetentionOptions(opts, false); err != nil || opts["retention"] != "consumed" {
		t.Errorf("stream retention: %v, %q", err, opts["retention"])
	}
	for _, c := range []struct {
		opts    map[string]string
		isTable bool
	}{
		{map[string]string{"retention": "consumed"}, true},
		{map[string]string{"history": "1 day"}, false},
		{map[string]string{"retention": "forever"}, false},
		{map[string]string{"history": "often"}, true},
	} {
		if err := CheckRetentionOptions(c.opts, c.isTable); err == nil {
			t.Errorf("%v (table %v) accepted", c.opts, c.isTable)
		}
	}
}

func TestPurgeCandidates(t *testing.T) {
	table := func(name, subject, js string, opts map[string]string) *catalog.Descriptor {
		return &catalog.Descriptor{Name: name, Kind: catalog.KindTable, Subject: subject, JSStream: js, Options: opts}
	}
	stream := func(name, subject, js string, opts map[string]string) *catalog.Descriptor {
		return &catalog.Descriptor{Name: name, Kind: catalog.KindStream, Subject: subject, JSStream: js, Options: opts}
	}
	consumed := map[string]string{OptRetention: RetentionConsumed}
	objs := []*catalog.Descriptor{
		table("t", "tbl.t", "T", map[string]string{OptHistory: "1 hour"}),
		table("replayed", "tbl.r", "R", nil),
		stream("kept", "ev.kept", "K", nil),
		stream("a", "ev.shared", "S", consumed),
		stream("b", "ev.shared", "S", consumed),
		stream("c", "ev.mixed", "M", consumed),
		stream("d", "ev.mixed", "M", nil),
		stream("e", "ev.moved", "X1", consumed),
		stream("f", "ev.moved", "X2", consumed),
		stream("g", "wide.one", "W1", consumed),
		stream("h", "wide.*", "W2", consumed),
		{Name: "v", Kind: catalog.KindView},
	}
	got := purgeCandidates(objs, func(d *catalog.Descriptor) bool { return d.Name == "replayed" })
	want := map[string]purgeTarget{
		"tbl.t":     {jsStream: "T", subject: "tbl.t", objects: []string{"t"}, history: time.Hour},
		"ev.shared": {jsStream: "S", subject: "ev.shared", objects: []string{"a", "b"}},
	}
	if len(got) != len(want) {
		t.Errorf("candidates %v, want the subjects of %v", got, want)
	}
	for subject, w := range want {
		g := got[subject]
		if g == nil || g.jsStream != w.jsStream || g.subject != w.subject || !slices.Equal(g.objects, w.objects) || g.history != w.history {
			t.Errorf("candidate %s: got %+v, want %+v", subject, g, w)
		}
	}
}

func TestAlterRetentionOptions(t *testing.T) {
	cur := map[string]string{OptHistory: "1 day", "subject": "x"}
	got, err := AlterRetentionOptions(cur, map[string]string{OptHistory: "2 days"}, nil, true)
	if err != nil || got[OptHistory] != "2 days" || got["subject"] != "x" || cur[OptHistory] != "1 day" {
		t.Errorf("set history: %v, %v (cur %v)", got, err, cur)
	}
	got, err = AlterRetentionOptions(map[string]string{OptHistory: "1 day"}, nil, []string{OptHistory}, true)
	if err != nil || got != nil {
		t.Errorf("reset the last option: %v, %v; want nil", got, err)
	}
	got, err = AlterRetentionOptions(nil, map[string]string{OptRetention: " CONSUMED"}, nil, false)
	if err != nil || got[OptRetention] != RetentionConsumed {
		t.Errorf("set retention: %v, %v", got, err)
	}
	for _, c := range []struct {
		set     map[string]string
		reset   []string
		isTable bool
		code    string
	}{
		{map[string]string{"subject": "y"}, nil, true, sqlerr.InvalidParameterValue},
		{nil, []string{"format"}, false, sqlerr.InvalidParameterValue},
		{map[string]string{OptRetention: "consumed"}, nil, true, sqlerr.InvalidParameterValue},
		{map[string]string{OptHistory: "soon"}, nil, true, sqlerr.InvalidParameterValue},
	} {
		_, err := AlterRetentionOptions(nil, c.set, c.reset, c.isTable)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != c.code {
			t.Errorf("set %v reset %v (table %v): %v, want SQLSTATE %s", c.set, c.reset, c.isTable, err, c.code)
		}
	}
}

func TestKeepsHistoryAt(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	created := now.Add(-48 * time.Hour)
	d := &catalog.Descriptor{Name: "t", Kind: catalog.KindTable, CreatedAt: created, Options: map[string]string{OptHistory: "1 day"}}
	for _, c := range []struct {
		d    *catalog.Descriptor
		at   time.Time
		want bool
	}{
		{d, now.Add(-time.Hour), true},
		{d, now.Add(-24 * time.Hour), true},
		{d, now.Add(-25 * time.Hour), false},
		{&catalog.Descriptor{Kind: catalog.KindTable, CreatedAt: now.Add(-time.Hour), Options: d.Options}, now.Add(-2 * time.Hour), false},
		{&catalog.Descriptor{Kind: catalog.KindTable, CreatedAt: created}, now.Add(-time.Hour), false},
		{&catalog.Descriptor{Kind: catalog.KindStream, CreatedAt: created, Options: d.Options}, now.Add(-time.Hour), false},
	} {
		if got := KeepsHistoryAt(c.d, c.at, now); got != c.want {
			t.Errorf("KeepsHistoryAt(%s %v, %v) = %v, want %v", c.d.Kind, c.d.Options, c.at, got, c.want)
		}
	}
}

// fakePurgeHost is a live catalog of tables only, which no new view
// replays.
type fakePurgeHost struct {
	objs   []*catalog.Descriptor
	purged int
}

func (h *fakePurgeHost) Objects() []*catalog.Descriptor                    { return h.objs }
func (h *fakePurgeHost) NewViewsReplayTable(*catalog.Descriptor) bool      { return false }
func (h *fakePurgeHost) ViewSources(*catalog.Descriptor) ([]string, error) { return nil, nil }
func (h *fakePurgeHost) AfterPurge(context.Context)                        { h.purged++ }

// fakeCoord is a checkpoint coordinator that retains the positions given.
type fakeCoord struct {
	mu       sync.Mutex
	retained []checkpoint.Position
	after    func(*checkpoint.Meta)
}

func (c *fakeCoord) SetAfterCheckpoint(fn func(*checkpoint.Meta)) { c.after = fn }
func (c *fakeCoord) Exclusive(fn func() error) error              { return fn() }
func (c *fakeCoord) RetainedPositions() ([]checkpoint.Position, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.retained, nil
}

// TestPurgerKeepsWhatIsNeeded purges a table's changelog in a real
// JetStream below the lowest of its running pipeline's position and a
// retained checkpoint's, and only once a checkpoint asked for it.
func TestPurgerKeepsWhatIsNeeded(t *testing.T) {
	b, err := broker.Connect(testutil.StartNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	const subject = "streamdb.table.t"
	js, err := b.EnsureStream(ctx, "t", subject)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := b.JS.Publish(ctx, subject, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	host := &fakePurgeHost{objs: []*catalog.Descriptor{{ID: 1, Name: "t", Kind: catalog.KindTable, Subject: subject, JSStream: js}}}
	coord := &fakeCoord{retained: []checkpoint.Position{{Subject: subject, Seq: 4}}}
	var mu sync.Mutex
	p := NewPurger(PurgerConfig{
		Host: host, Catalog: &mu, Broker: b, Coord: coord,
		Positions: func() []exec.ViewPosition {
			return []exec.ViewPosition{{ViewID: 1, View: "t", Stream: "t", Subject: subject, Seq: 6}}
		},
		Stored: func(uint32, uint16) (storage.SourcePosition, error) {
			t.Error("a running pipeline's stored position was read")
			return storage.SourcePosition{}, nil
		},
		Log: slog.New(slog.DiscardHandler),
	})
	defer p.Stop()
	p.Start()
	first := func() uint64 {
		seq, err := b.FirstSeq(ctx, js)
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	if f := first(); f != 1 {
		t.Fatalf("purged before any checkpoint: first sequence %d", f)
	}
	waitFirst := func(want uint64) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for first() != want {
			if time.Now().After(deadline) {
				t.Fatalf("first sequence %d, want %d", first(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	coord.after(&checkpoint.Meta{})
	waitFirst(5) // the retained checkpoint read up to 4
	coord.mu.Lock()
	coord.retained = nil
	coord.mu.Unlock()
	coord.after(&checkpoint.Meta{})
	waitFirst(7) // the pipeline read up to 6
	p.Stop()
	mu.Lock() // no purge holds the catalog lock once stopped
	mu.Unlock()
	if host.purged < 2 {
		t.Errorf("AfterPurge ran %d times, want at least 2", host.purged)
	}
}
