package exec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"streamdb/broker"
)

// TestRetryTxnReadKeepsTrying: a read of a committed transaction that
// keeps failing with a connection's error is tried again however many
// attempts failed; a reference that stands for nothing, data that is
// gone and a stopping reader are not.
func TestRetryTxnReadKeepsTrying(t *testing.T) {
	old := txnReadBackoff
	txnReadBackoff = time.Microsecond
	t.Cleanup(func() { txnReadBackoff = old })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &subjectReader{ctx: ctx, log: slog.New(slog.DiscardHandler)}
	ref := broker.TxnRef{Txn: "t1"}
	transient := errors.New("nats: outbound buffer limit exceeded")
	for attempt := range 200 {
		if !r.retryTxnRead(attempt, ref, transient) {
			t.Fatalf("attempt %d of a transient error not retried", attempt+1)
		}
	}
	for _, err := range []error{
		&broker.BadTxnRefError{},
		fmt.Errorf("read transaction t1 at sequence 7: %w", jetstream.ErrMsgNotFound),
	} {
		if r.retryTxnRead(0, ref, err) {
			t.Errorf("%v retried", err)
		}
	}
	cancel()
	if r.retryTxnRead(0, ref, transient) {
		t.Error("retried after the reader stopped")
	}
}
