package node

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"streamdb/checkpoint"
	"streamdb/exec"
	"streamdb/storage"
)

// TestCheckpointCut: the coordinator's cut carries every field of the
// runtime's, position by position.
func TestCheckpointCut(t *testing.T) {
	in := exec.Cut{Epoch: 12, Positions: []exec.ViewPosition{
		{ViewID: 4, View: "v", Source: 0, Stream: "s", Subject: "s.a", Seq: 100},
		{ViewID: 5, View: "w", Source: 2, Stream: "t", Subject: "t.b", Seq: 7},
	}}
	want := checkpoint.Cut{Epoch: 12, Positions: []checkpoint.ViewPosition{
		{ViewID: 4, View: "v", Source: 0, Stream: "s", Subject: "s.a", Seq: 100},
		{ViewID: 5, View: "w", Source: 2, Stream: "t", Subject: "t.b", Seq: 7},
	}}
	if got := checkpointCut(in); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
		t.Errorf("checkpointCut = %+v, want %+v", got, want)
	}
	if got := checkpointCut(exec.Cut{Epoch: 3}); got.Epoch != 3 || got.Positions != nil {
		t.Errorf("checkpointCut of a cut without views = %+v", got)
	}
}

// TestRuntimeEpochs: the adapter runs fn at the runtime's epoch boundary
// and passes its error back.
func TestRuntimeEpochs(t *testing.T) {
	store, err := storage.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rt := exec.NewRuntime(store, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Millisecond)
	rt.Start()
	defer rt.Close()
	var src checkpoint.EpochSource = runtimeEpochs{rt}
	called := false
	want := fmt.Errorf("from fn")
	err = src.AtEpochBoundary(func(cut checkpoint.Cut) error {
		called = true
		if len(cut.Positions) != 0 {
			t.Errorf("a runtime without views reported positions %v", cut.Positions)
		}
		return want
	})
	if !called || err != want {
		t.Errorf("AtEpochBoundary: called %t, error %v; want called and %v", called, err, want)
	}
}
