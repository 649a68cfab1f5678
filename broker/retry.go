package broker

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// RequestAttempt bounds one attempt of a call Retry repeats: nats.go's
// own default for a JetStream API request without a deadline.
const RequestAttempt = 5 * time.Second

// retryPause is the wait between attempts that failed at once (no
// responders while a node restarts), so that they do not spin.
const retryPause = 100 * time.Millisecond

// Retry runs fn until it succeeds, fails other than by a timeout, or ctx
// is done; each attempt gets at most attempt of ctx's time. A JetStream
// API request whose reply is lost is never answered, and nats.go waits
// for it until its context ends: the NATS node the connection was on
// went away (the connection moves to another node, the request does not
// follow), or the stream or meta leader that was to answer lost its role
// in that moment. One long context then turns a lost reply into a hang
// of all its time; short attempts send the request again, to the node
// and leader now in place. fn must be idempotent.
func Retry(ctx context.Context, attempt time.Duration, fn func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, attempt)
		err := fn(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(retryPause):
		}
	}
}

// retryable reports an error of a request that may succeed if sent again:
// no answer in time, nobody to answer yet, or JetStream's 503 (its
// cluster has no leader yet).
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrConnectionReconnecting) ||
		errors.As(err, &apiErr) && apiErr.Code == 503
}
