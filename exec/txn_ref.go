package exec

import (
	"errors"
	"fmt"
	"time"

	"streamdb/broker"
	"streamdb/faults"

	"github.com/nats-io/nats.go/jetstream"
)

// decode decodes one message, the message at stream sequence seq, into
// the chunk. A transaction's reference message (broker.TxnRef) stands for
// the data it names: once the transaction is decided, a committed one's
// data is decoded in its place, at its position, and an aborted one's is
// nothing. Rows of a transaction's data carry the reference message's
// metadata (broker.MsgInfo), as ad-hoc reads (ReadRangeInfo) give them.
// Caller holds mu.
func (r *subjectReader) decode(m jetstream.Msg, seq uint64) error {
	ref, isRef, err := broker.ParseTxnRef(m.Headers(), m.Data())
	rows, _ := r.decoder.(*RowDecoder)
	var info *broker.MsgInfo
	if rows != nil && rows.HasMetadata() {
		info = &broker.MsgInfo{Subject: m.Subject(), Header: m.Headers(), Seq: seq}
		if meta, err := m.Metadata(); err == nil {
			info.Time = meta.Timestamp
		}
	}
	if ed, ok := r.decoder.(infoDecoder); ok && !isRef {
		var info *broker.MsgInfo
		if ed.hasMetadata() {
			info = &broker.MsgInfo{Subject: m.Subject(), Header: m.Headers(), Seq: seq}
			if meta, err := m.Metadata(); err == nil {
				info.Time = meta.Timestamp
			}
		}
		return ed.decodeWithInfo(m.Data(), info, r.chunk)
	}
	if !isRef {
		if rows == nil {
			return r.decoder.decodeInto(m.Data(), r.chunk)
		}
		before := rows.noColumn
		err := rows.decodeInto(m.Data(), r.chunk)
		if rows.noColumn > before {
			r.noColumn.Add(1)
		}
		if err == nil && info != nil {
			rows.FillMetadata(r.chunk.Rows[r.chunk.Len()-1], info)
		}
		return err
	}
	if err != nil {
		return err
	}
	var committed bool
	for attempt := 0; ; attempt++ {
		if committed, err = r.rt.broker.TxnCommitted(r.ctx, m.Subject(), ref); err == nil || !r.retryTxnRead(attempt, ref, err) {
			break
		}
	}
	if err != nil || !committed {
		return err
	}
	// The rows of a large transaction go out in chunks as they are read,
	// so a read that fails part-way resumes after the data messages
	// already decoded. A committed transaction is delivered whole or not
	// at all: once a chunk of it went out, an error that is not retried
	// is a partTxnError, which stops the views.
	decoded, sent := 0, false
	var decodeErr error
	for attempt := 0; ; attempt++ {
		err := r.rt.broker.ReadTxnData(r.ctx, skipTxnData(ref, decoded), func(data []byte) error {
			if decoded > 0 && faults.Fail("txn-read-fails") {
				return errors.New("fault txn-read-fails: the read failed")
			}
			if decoded > 0 && faults.Fail("txn-data-gone") {
				return fmt.Errorf("fault txn-data-gone: %w", jetstream.ErrMsgNotFound)
			}
			if err := r.decoder.decodeInto(data, r.chunk); err != nil {
				decodeErr = err
				return err
			}
			decoded++
			if info != nil {
				rows.FillMetadata(r.chunk.Rows[r.chunk.Len()-1], info)
			}
			if r.chunk.Len() >= chunkRows {
				r.flushLocked()
				sent = true
			}
			return nil
		})
		if err == nil || r.ctx.Err() != nil {
			return err
		}
		if decodeErr == nil && r.retryTxnRead(attempt, ref, err) {
			continue
		}
		if sent || errors.Is(err, jetstream.ErrMsgNotFound) {
			return &partTxnError{txn: ref.Txn, err: err}
		}
		return err
	}
}

// partTxnError is a committed transaction the reader cannot deliver
// whole: part of its rows went out before an error that retrying cannot
// mend (its data does not decode, or is gone). Skipping the rest would
// leave a view with part of the commit for good, so the views stop.
type partTxnError struct {
	txn string
	err error
}

func (e *partTxnError) Error() string {
	return fmt.Sprintf("committed transaction %s cannot be read whole (%v); the view stops rather than keep part of it: "+
		"restore a checkpoint taken before it, or re-create the view", e.txn, e.err)
}

func (e *partTxnError) Unwrap() error { return e.err }

// txnReadLogEvery is how often a read that keeps failing is logged: its
// first attempt and every txnReadLogEvery-th.
const txnReadLogEvery = 10

// txnReadBackoff is the pause after a failed read's first attempt; each
// attempt waits one more, up to txnReadMaxPauses of them.
var txnReadBackoff = faults.Duration("txn-read-backoff", 100*time.Millisecond)

const txnReadMaxPauses = 20

// retryTxnRead reports whether a read of transaction ref that failed with
// err is tried again, after a pause: yes, however often it failed, unless
// the reader stops or the error is one retrying cannot mend (a reference
// that stands for nothing, data that is gone). Other errors are the
// connection's (NATS reconnecting under load, a full outbound buffer),
// and giving up on them would lose a committed transaction or deliver
// part of it. The reader holds mu meanwhile: barriers, and so
// checkpoints, wait for the read.
func (r *subjectReader) retryTxnRead(attempt int, ref broker.TxnRef, err error) bool {
	var bad *broker.BadTxnRefError
	if errors.As(err, &bad) || errors.Is(err, jetstream.ErrMsgNotFound) || r.ctx.Err() != nil {
		return false
	}
	if attempt == 0 || (attempt+1)%txnReadLogEvery == 0 {
		r.log.Warn("reading a transaction failed; trying again", "txn", ref.Txn, "attempt", attempt+1, "err", err)
	}
	select {
	case <-time.After(time.Duration(min(attempt+1, txnReadMaxPauses)) * txnReadBackoff):
	case <-r.ctx.Done():
	}
	return r.ctx.Err() == nil
}

// skipTxnData returns ref without its first n data messages.
func skipTxnData(ref broker.TxnRef, n int) broker.TxnRef {
	if n == 0 {
		return ref
	}
	out := ref
	out.Data = nil
	for _, rg := range ref.Data {
		size := int(rg[1] - rg[0] + 1)
		if n >= size {
			n -= size
			continue
		}
		out.Data = append(out.Data, [2]uint64{rg[0] + uint64(n), rg[1]})
		n = 0
	}
	return out
}
