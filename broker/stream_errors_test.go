//go:build linux

package broker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"streamdb/sqlerr"
)

// TestStreamWriteErrorRecorded makes a stream's store fail to create its
// next block file: JetStream keeps that error and answers no later
// publish to the stream. The broker records it from the server's log,
// StreamFailed signals it, and StreamWriteError gives writers 58030
// saying that a restart reopens the stream; other streams are unaffected.
func TestStreamWriteErrorRecorded(t *testing.T) {
	b := startTestBroker(t)
	b.SetSynchronousCommit(false) // the store's error, not the fsync's
	createStream(t, b, "BIG", "big")
	createStream(t, b, "OK", "ok")
	if b.StreamWriteError("BIG", "w") != nil {
		t.Fatal("a write error before any write")
	}
	failed := b.StreamFailed()

	// The store cannot make its next block file: its directory is gone
	// (as a file the server cannot open, for want of a descriptor, say).
	payload := make([]byte, 900_000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := os.RemoveAll(filepath.Join(b.syncer.root, "BIG", "msgs")); err != nil {
		t.Fatal(err)
	}
	var pubErr error
	for i := 0; i < 100 && pubErr == nil; i++ {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		_, pubErr = b.JS.Publish(pctx, "big", payload)
		pcancel()
	}
	if pubErr == nil {
		t.Fatal("100 messages of 900 kB took no new block file")
	}
	t.Logf("publish without its directory: %v", pubErr)
	select {
	case <-failed:
	case <-time.After(10 * time.Second):
		t.Fatal("StreamFailed was not signalled")
	}
	se := b.StreamWriteError("BIG", `could not write to table "big"`)
	if se == nil {
		t.Fatal("no write error recorded for stream BIG")
	}
	if se.Code != sqlerr.IOError || !strings.Contains(se.Message, "BIG") || !strings.Contains(se.Hint, "restart") {
		t.Errorf("StreamWriteError = %s %q (hint %q)", se.Code, se.Message, se.Hint)
	}
	// JetStream keeps the error: the stream answers nothing, which is why
	// writers are told at once.
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := b.JS.Publish(pctx, "big", []byte("x"))
	pcancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Logf("publish to the failed stream: %v (JetStream may have cleared its error)", err)
	}
	if b.StreamWriteError("OK", "w") != nil {
		t.Error("a write error recorded for stream OK")
	}
	if _, err := b.JS.Publish(ctx, "ok", []byte("x")); err != nil {
		t.Errorf("publish to another stream: %v", err)
	}
}
