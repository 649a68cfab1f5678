package ha

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/tests/testutil"
)

// A server that took its group's lease is taking over until its state is
// restored: it refuses sessions as starting up, and /readyz says so. Here
// it stays there, because the group's checkpoint bucket cannot be opened
// (made beforehand in memory, while the server wants it on disk). A
// SIGTERM then stops it cleanly (exit status 0) and releases the lease
// at once, so another server of the group can take over without waiting
// for the lease to expire.
func TestSignalWhileTakingOver(t *testing.T) {
	url := testutil.StartNATS(t)
	_, js := testutil.JetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "streamdb_ha_stop_checkpoints", Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	s := startMember(t, url, "stop")
	testutil.Poll(t, 30*time.Second, "/readyz to say the server is taking over", func() error {
		resp, err := http.Get(s.HTTPURL() + "/readyz")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "taking over") {
			return fmt.Errorf("%d %s", resp.StatusCode, body)
		}
		return nil
	})
	if msg, err := refusal(s); err != nil || !strings.Contains(msg, "starting up") {
		t.Fatalf("a session while taking over: %q, %v; want 57P03 starting up", msg, err)
	}
	kv, err := js.KeyValue(ctx, "streamdb_ha_stop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "lease"); err != nil {
		t.Fatalf("the lease while the server takes over: %v", err)
	}
	s.Stop(t) // fails the test unless the exit status is 0
	// Read at once: the lease's TTL (3s) has not run out.
	if e, err := kv.Get(ctx, "lease"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the lease after SIGTERM: %v, %v; want it released (deleted)", e, err)
	}
	if !strings.Contains(s.Logs(), "stopping while starting") {
		t.Fatal("the server's log does not say it stopped while starting")
	}
}
