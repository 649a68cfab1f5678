//go:build linux

package broker

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"streamdb/tests/testutil/powercut"
)

// TestSynchronousCommitSurvivesPowerCut: messages acknowledged through JS
// with synchronous commit on are in the stream after a power cut on a
// filesystem that keeps only what was fsynced, the directories the server
// made above the stream (jetstream/, the account's, streams/) included.
// The store sits in a directory of the mount, as <data dir>/nats does.
func TestSynchronousCommitSurvivesPowerCut(t *testing.T) {
	fsys := powercut.Mount(t, filepath.Join(t.TempDir(), "data"), "")
	store := filepath.Join(fsys.Dir, "nats")
	b, err := StartEmbedded("127.0.0.1:-1", store)
	if err != nil {
		t.Fatal(err)
	}
	createStream(t, b, "T", "t")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const n = 20
	for i := 0; i < n; i++ {
		if _, err := b.JS.Publish(ctx, "t", []byte("m")); err != nil {
			t.Fatal(err)
		}
	}
	image := filepath.Join(t.TempDir(), "image")
	lost, err := fsys.Cut(image)
	if err != nil {
		t.Fatal(err)
	}
	b.Close() // its writes after the cut fail, as the power is off
	if err := fsys.Unmount(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remount(image); err != nil {
		t.Fatal(err)
	}
	b, err = StartEmbedded("127.0.0.1:-1", store)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s, err := b.JS.Stream(ctx, "T")
	if err != nil {
		t.Fatalf("stream T after the power cut: %v; the cut lost:\n%s", err, powercut.Summary(lost, 50))
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != n {
		t.Fatalf("stream T holds %d messages after the power cut, want the %d acknowledged; the cut lost:\n%s", info.State.Msgs, n, powercut.Summary(lost, 50))
	}
}
