package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A write of several messages to one subject lands whole or not at all
// through JetStream's atomic batch publish (ADR-50): every message carries
// the batch's id and its place in it (headers Nats-Batch-Id and
// Nats-Batch-Sequence, from 1), the last one also Nats-Batch-Commit: 1.
// The server stages the batch and, at the commit message, checks every
// message against the stream's limits and stores all of them or none;
// only the commit message is acknowledged (with the last message's
// sequence). The stream must allow it (allow_atomic, set on every stream
// streamdb creates), and the server takes at most MaxAtomicBatch messages
// in one batch (its default max_batch_size). Where a batch cannot be used
// (ErrAtomicUnavailable), callers go through the transaction stream
// instead (txn.go), which is whole too.

// MaxAtomicBatch is the most messages PublishAtomic publishes as one
// batch: NATS's default limit (server option max_batch_size).
const MaxAtomicBatch = 1000

const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// Error codes of JetStream's atomic publish that say the batch was not
// taken as a batch (nothing of it is stored), as opposed to a limit of
// the stream refusing its messages.
const (
	errCodeAtomicDisabled   = 10174
	errCodeAtomicMissingSeq = 10175
	errCodeAtomicIncomplete = 10176
	errCodeAtomicHeader     = 10177
	errCodeAtomicBatchID    = 10179
	errCodeAtomicTooLarge   = 10199
	errCodeAtomicCommit     = 10200
	errCodeAtomicInflight   = 10210
)

// ErrAtomicUnavailable is PublishAtomic's answer when the stream or the
// server cannot take the messages as one atomic batch (the stream does not
// allow atomic publish, the server takes smaller batches, or too many
// batches are open): nothing was stored, and the caller publishes another
// way.
var ErrAtomicUnavailable = errors.New("JetStream cannot take this write as one atomic batch")

// ErrAtomicDisabled is the ErrAtomicUnavailable of a stream that does not
// allow atomic publish (allow_atomic off: a JetStream stream someone else
// made, or one made by an older streamdb).
var ErrAtomicDisabled = fmt.Errorf("%w: the stream does not allow atomic publish", ErrAtomicUnavailable)

// atomicOffFor is how long PublishAtomic remembers that a stream does not
// allow atomic publish before it tries again (someone may enable it).
const atomicOffFor = time.Minute

// atomicOff remembers the streams that refused atomic publish.
type atomicOff struct {
	mu    sync.Mutex
	until map[string]time.Time
}

func (a *atomicOff) off(stream string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return time.Now().Before(a.until[stream])
}

func (a *atomicOff) set(stream string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.until == nil {
		a.until = map[string]time.Time{}
	}
	a.until[stream] = time.Now().Add(atomicOffFor)
}

// PublishAtomic publishes msgs to subject, which JetStream stream stream
// holds, as one atomic batch: JetStream stores every message, one after
// another, or none. It returns the acknowledgement of the last message
// (through JS, so with synchronous commit it covers the whole batch), or
// ErrAtomicUnavailable when the batch could not be used and nothing was
// stored. Any other error is the stream's answer (a limit it would break,
// say), and nothing was stored either, except for a timeout: then the
// batch may have landed.
func (b *Broker) PublishAtomic(ctx context.Context, stream, subject string, msgs [][]byte) (*jetstream.PubAck, error) {
	if b.atomicOff.off(stream) {
		return nil, ErrAtomicDisabled
	}
	if len(msgs) == 0 || len(msgs) > MaxAtomicBatch {
		return nil, ErrAtomicUnavailable
	}
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	last := len(msgs) - 1
	for i, data := range msgs[:last] {
		m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
		m.Header.Set(batchIDHeader, id)
		m.Header.Set(batchSeqHeader, strconv.Itoa(i+1))
		// No reply: the server answers the commit message for the whole
		// batch, and a batch with a message missing is incomplete.
		if err := b.NC.PublishMsg(m); err != nil {
			return nil, err
		}
	}
	m := &nats.Msg{Subject: subject, Data: msgs[last], Header: nats.Header{}}
	m.Header.Set(batchIDHeader, id)
	m.Header.Set(batchSeqHeader, strconv.Itoa(last+1))
	m.Header.Set(batchCommitHeader, "1")
	ack, err := b.JS.PublishMsg(ctx, m, jetstream.WithExpectStream(stream))
	var api *jetstream.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode {
		case errCodeAtomicDisabled:
			b.atomicOff.set(stream)
			return nil, ErrAtomicDisabled
		case errCodeAtomicMissingSeq, errCodeAtomicIncomplete, errCodeAtomicHeader, errCodeAtomicBatchID,
			errCodeAtomicTooLarge, errCodeAtomicCommit, errCodeAtomicInflight:
			return nil, ErrAtomicUnavailable
		}
	}
	return ack, err
}
