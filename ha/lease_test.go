package ha

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"streamdb/sqlerr"
	"streamdb/tests/testutil"
)

func openLease(t *testing.T, url, holder, addr string) *Lease {
	t.Helper()
	_, js := testutil.JetStream(t, url)
	l, err := Open(context.Background(), js, Options{Group: "g1", Holder: holder, Addr: addr,
		TTL: 1500 * time.Millisecond, Renew: 300 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// One server holds the lease; when it stops renewing (a crash), another
// takes it only after the NATS server expired it, with a larger token,
// and the old holder's own clock has stopped its commits by then. The old
// holder's next renewal finds the other's revision: it is lost.
func TestLeaseTakeoverAndFencing(t *testing.T) {
	url := testutil.StartNATS(t)
	ctx := context.Background()
	a := openLease(t, url, "a", "127.0.0.1:1")
	b := openLease(t, url, "b", "127.0.0.1:2")
	if ok, err := a.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("a.TryAcquire = %v, %v; want true", ok, err)
	}
	if ok, err := b.TryAcquire(ctx); ok || err != nil {
		t.Fatalf("b.TryAcquire while a renews = %v, %v; want false", ok, err)
	}
	if h, err := b.Current(ctx); err != nil || h == nil || h.Addr != "127.0.0.1:1" {
		t.Fatalf("b.Current = %+v, %v; want a's address", h, err)
	}
	// Renewals keep it: after several TTLs a still holds it.
	first := a.Token()
	testutil.Poll(t, 10*time.Second, "a's token to grow past 3 TTLs of renewals", func() error {
		if a.Token() < first+10 {
			return errors.New("not yet")
		}
		return nil
	})
	if ok, _ := b.TryAcquire(ctx); ok {
		t.Fatal("b took the lease a keeps renewing")
	}
	if err := a.Check(); err != nil {
		t.Fatalf("a.Check while renewing: %v", err)
	}

	// a stops renewing, as a paused or dead process does.
	close(a.stop)
	<-a.done
	aToken := a.Token()
	if err := b.Acquire(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.Check(); !errors.Is(err, ErrLost) {
		t.Fatalf("a.Check after b took the lease = %v; want ErrLost (a's clock must stop it before the lease expires)", err)
	}
	if b.Token() <= aToken {
		t.Fatalf("b's token %d is not above a's %d", b.Token(), aToken)
	}
	// a comes back: its renewal is a compare-and-set on its old token.
	a.mu.Lock()
	a.validTo = time.Now().Add(time.Hour) // as if its clock had not run
	a.mu.Unlock()
	if err := a.Confirm(ctx); !errors.Is(err, ErrLost) {
		t.Fatalf("a.Confirm after b took the lease = %v; want ErrLost", err)
	}
	select {
	case <-a.Lost():
	default:
		t.Fatal("a.Lost not closed")
	}
	if err := b.Confirm(ctx); err != nil {
		t.Fatalf("b.Confirm: %v", err)
	}

	// A clean release hands over at once.
	c := openLease(t, url, "c", "127.0.0.1:3")
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.TryAcquire(ctx); !ok || err != nil {
		t.Fatalf("c.TryAcquire after b's release = %v, %v; want true", ok, err)
	}
	c.Release(ctx)
}

// A standby refuses every session at startup with 57P03 naming the
// active server; a client given both hosts goes on to the next one.
func TestStandbyRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := ServeStandby(ln, func() string { return "10.0.0.7:5433" })
	defer s.Close()
	for _, mode := range []string{"disable", "prefer"} {
		_, err = pgconn.Connect(context.Background(), "postgres://streamdb@"+ln.Addr().String()+"/streamdb?sslmode="+mode)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != sqlerr.CannotConnectNow || pgErr.Message != "the database system is a standby; the active server is 10.0.0.7:5433" {
			t.Fatalf("sslmode=%s: connect to a standby: %v; want 57P03 naming the active server", mode, err)
		}
	}
}
