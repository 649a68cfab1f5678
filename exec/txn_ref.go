package exec

import (
	"streamdb/broker"

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
	if committed, err := r.rt.broker.TxnCommitted(r.ctx, m.Subject(), ref); err != nil || !committed {
		return err
	}
	return r.rt.broker.ReadTxnData(r.ctx, ref, func(data []byte) error {
		if err := r.decoder.decodeInto(data, r.chunk); err != nil {
			return err
		}
		if info != nil {
			rows.FillMetadata(r.chunk.Rows[r.chunk.Len()-1], info)
		}
		if r.chunk.Len() >= chunkRows {
			r.flushLocked()
		}
		return nil
	})
}
