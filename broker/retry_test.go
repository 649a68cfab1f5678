package broker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRetry: an attempt whose reply is lost (it waits until its context
// ends) is sent again after the attempt's time, not after the caller's
// whole timeout; an error that a new attempt cannot change returns at
// once; the caller's context bounds the whole.
func TestRetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	attempts := 0
	start := time.Now()
	err := Retry(ctx, 100*time.Millisecond, func(ctx context.Context) error {
		attempts++
		if attempts == 1 {
			<-ctx.Done() // a request whose reply never comes
			return ctx.Err()
		}
		return nil
	})
	if err != nil || attempts != 2 || time.Since(start) > 10*time.Second {
		t.Fatalf("lost reply: %v after %d attempts and %v; want success on the second", err, attempts, time.Since(start))
	}

	refused := errors.New("refused")
	attempts = 0
	if err := Retry(ctx, time.Second, func(context.Context) error { attempts++; return refused }); !errors.Is(err, refused) || attempts != 1 {
		t.Fatalf("a refusal: %v after %d attempts; want it at once", err, attempts)
	}

	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	attempts = 0
	err = Retry(short, 100*time.Millisecond, func(ctx context.Context) error {
		attempts++
		<-ctx.Done()
		return ctx.Err()
	})
	if !errors.Is(err, context.DeadlineExceeded) || attempts < 2 || short.Err() == nil {
		t.Fatalf("never answered: %v after %d attempts; want the deadline once the caller's context ended", err, attempts)
	}
}
