package exec

import (
	"streamdb/broker"

	"github.com/nats-io/nats.go/jetstream"
)

// decode decodes one message into the chunk. A transaction's reference
// message (broker.TxnRef) stands for the data it names: once the
// transaction is decided, a committed one's data is decoded in its place,
// at its position, and an aborted one's is nothing. Caller holds mu.
func (r *subjectReader) decode(m jetstream.Msg) error {
	ref, isRef, err := broker.ParseTxnRef(m.Headers(), m.Data())
	if !isRef {
		rows, ok := r.decoder.(*RowDecoder)
		if !ok {
			return r.decoder.decodeInto(m.Data(), r.chunk)
		}
		before := rows.noColumn
		err := rows.decodeInto(m.Data(), r.chunk)
		if rows.noColumn > before {
			r.noColumn.Add(1)
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
		if r.chunk.Len() >= chunkRows {
			r.flushLocked()
		}
		return nil
	})
}
