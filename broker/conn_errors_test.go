package broker

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// lockedBuffer is a bytes.Buffer the log handler and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestSlowConsumerIsLogged fills a subscription past its pending limit on
// the broker's connection: the messages it drops are logged with the
// subscription's subject (nats.go drops them silently without an error
// handler).
func TestSlowConsumerIsLogged(t *testing.T) {
	var logged lockedBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	b := startTestBroker(t)
	release := make(chan struct{})
	sub, err := b.NC.Subscribe("slow.sub", func(*nats.Msg) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	if err := sub.SetPendingLimits(1, 1<<20); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := b.NC.Publish("slow.sub", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.NC.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logged.String(), "subject=slow.sub") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the slow consumer; the log holds:\n%s", logged.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logged.String(), "slow consumer") {
		t.Errorf("the log does not say why:\n%s", logged.String())
	}
}
