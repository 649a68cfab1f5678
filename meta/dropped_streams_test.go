package meta

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
	"streamdb/catalog"
	"streamdb/checkpoint"
	"streamdb/storage"
	"streamdb/tests/testutil"
)

// fakeHistory is a checkpoint coordinator whose history is given.
type fakeHistory struct{ history []checkpoint.Meta }

func (c *fakeHistory) History() []checkpoint.Meta      { return c.history }
func (c *fakeHistory) Exclusive(fn func() error) error { return fn() }

// pointWithTables writes, under dir, the Pebble state of a checkpoint
// whose catalog holds a table on each JetStream stream given.
func pointWithTables(t *testing.T, dir string, streams ...string) {
	t.Helper()
	st, err := storage.Open(filepath.Join(dir, checkpoint.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := st.NewBatch()
	defer b.Close()
	for i, js := range streams {
		d := &catalog.Descriptor{ID: uint32(i + 1), Name: "t" + js, Kind: catalog.KindTable, JSStream: js, Subject: "held." + js}
		if err := storage.PutDescriptor(b, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Commit(b, true); err != nil {
		t.Fatal(err)
	}
}

// TestDroppedStreamsCollect: a collection deletes the JetStream streams
// this server made for tables that are gone, found after a restart too,
// and keeps those a live object, a retained point's positions or a
// retained point's catalog still refers to, and those another server
// made.
func TestDroppedStreamsCollect(t *testing.T) {
	b, err := broker.Connect(testutil.StartNATS(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	dataDir, cpDir := t.TempDir(), t.TempDir()
	coord := &fakeHistory{}
	var live []*catalog.Descriptor
	var mu sync.Mutex
	newCollector := func() *DroppedStreams {
		return NewDroppedStreams(DroppedStreamsConfig{
			Catalog: &mu, Live: func() []*catalog.Descriptor { return live }, Broker: b, Coord: coord,
			Settings: func() checkpoint.Settings {
				return checkpoint.Settings{Dir: filepath.Join(cpDir, "checkpoints"), SavepointsDir: filepath.Join(cpDir, "savepoints")}
			},
			DataDir: dataDir, Log: slog.New(slog.DiscardHandler),
		})
	}
	first := newCollector()
	owner, err := first.Owner()
	if err != nil || owner == "" {
		t.Fatalf("owner %q: %v", owner, err)
	}
	if data, err := os.ReadFile(filepath.Join(dataDir, ownerFile)); err != nil || strings.TrimSpace(string(data)) != owner {
		t.Fatalf("owner file holds %q (%v), want %q", data, err, owner)
	}
	streams := map[string]string{} // name -> JetStream stream
	for _, c := range []struct{ name, owner string }{
		{"gone", owner}, {"live", owner}, {"positions", owner}, {"catalog", owner}, {"foreign", "another-server"},
	} {
		js, created, err := b.EnsureStreamFor(ctx, c.name, "tbl."+c.name, c.owner)
		if err != nil || !created {
			t.Fatalf("create %s: %v (created %v)", c.name, err, created)
		}
		streams[c.name] = js
	}
	live = []*catalog.Descriptor{{Name: "live", Kind: catalog.KindTable, JSStream: streams["live"], Subject: "tbl.live"}}
	pointDir := filepath.Join(cpDir, "checkpoints", "chk-1")
	pointWithTables(t, pointDir, streams["catalog"])
	coord.history = []checkpoint.Meta{
		{ID: 1, Status: checkpoint.StatusCompleted, Dir: pointDir},
		{ID: 2, Status: checkpoint.StatusCompleted, Dir: filepath.Join(cpDir, "gone-point"),
			Positions: []checkpoint.Position{{Subject: "tbl.positions", Seq: 3}}},
	}

	// A restarted server: it finds its tables' streams that nothing
	// reads; the foreign one is not its own.
	g := newCollector()
	if again, err := g.Owner(); err != nil || again != owner {
		t.Fatalf("owner after restart %q (%v), want %q", again, err, owner)
	}
	g.Note(streams["foreign"], "tbl.foreign")
	if !g.PendingCollides("tbl.*") || g.PendingCollides("other") {
		t.Errorf("PendingCollides does not follow the pending subjects")
	}
	mu.Lock()
	g.CollectLocked()
	mu.Unlock()
	exists := func(js string) bool {
		_, err := b.JS.Stream(ctx, js)
		if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	for name, want := range map[string]bool{"gone": false, "live": true, "positions": true, "catalog": true, "foreign": true} {
		if got := exists(streams[name]); got != want {
			t.Errorf("JetStream stream of %s exists: %v, want %v", name, got, want)
		}
	}
	if g.PendingCollides("tbl.foreign") {
		t.Errorf("another server's stream stays pending")
	}

	// Once no point holds them, they go.
	coord.history = nil
	mu.Lock()
	g.CollectLocked()
	mu.Unlock()
	for name, want := range map[string]bool{"live": true, "positions": false, "catalog": false, "foreign": true} {
		if got := exists(streams[name]); got != want {
			t.Errorf("after the points went: JetStream stream of %s exists: %v, want %v", name, got, want)
		}
	}
}
