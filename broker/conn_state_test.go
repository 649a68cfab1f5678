package broker

import (
	"testing"
	"time"
)

// TestConnStateFollowsConnection: Connected and MaxPayload answer from the
// connection's callbacks as the connection itself does, and Connected
// turns false once the server goes away.
func TestConnStateFollowsConnection(t *testing.T) {
	b := startTestBroker(t)
	if !b.Connected() {
		t.Fatal("Connected() = false on a fresh connection")
	}
	if got, want := b.MaxPayload(), b.NC.MaxPayload(); got != want || got <= 0 {
		t.Fatalf("MaxPayload() = %d, want the connection's %d", got, want)
	}
	b.embedded.Shutdown()
	deadline := time.Now().Add(10 * time.Second)
	for b.Connected() {
		if time.Now().After(deadline) {
			t.Fatalf("Connected() still true 10s after the server shut down (connection status %v)", b.NC.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
