package exec

import (
	"errors"
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
	// so a read that fails part-way (the NATS connection reconnecting
	// under load) resumes after the data messages already decoded rather
	// than skipping the message, which would leave part of the commit.
	decoded := 0
	var decodeErr error
	for attempt := 0; ; attempt++ {
		err := r.rt.broker.ReadTxnData(r.ctx, skipTxnData(ref, decoded), func(data []byte) error {
			if decoded > 0 && faults.Fail("txn-read-fails") {
				return errors.New("fault txn-read-fails: the read failed")
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
			}
			return nil
		})
		if err == nil || decodeErr != nil || !r.retryTxnRead(attempt, ref, err) {
			return err
		}
	}
}

// txnReadAttempts bounds the attempts at reading one transaction (about
// a minute with the backoff below): an error that lasts is reported as
// the message's.
const txnReadAttempts = 40

// txnReadBackoff is the pause after a failed read's first attempt; each
// attempt waits one more, up to 20.
var txnReadBackoff = faults.Duration("txn-read-backoff", 100*time.Millisecond)

// retryTxnRead reports whether a read of transaction ref that failed with
// err is tried again, after a pause: not for a reference that stands for
// nothing, when stopping, or past txnReadAttempts.
func (r *subjectReader) retryTxnRead(attempt int, ref broker.TxnRef, err error) bool {
	var bad *broker.BadTxnRefError
	if errors.As(err, &bad) || r.ctx.Err() != nil || attempt+1 >= txnReadAttempts {
		return false
	}
	if attempt == 0 || attempt%10 == 9 {
		r.log.Warn("reading a transaction failed; trying again", "txn", ref.Txn, "attempt", attempt+1, "err", err)
	}
	select {
	case <-time.After(min(time.Duration(attempt+1)*txnReadBackoff, 20*txnReadBackoff)):
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
