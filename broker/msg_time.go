package broker

import (
	"context"
	"time"
)

// MsgTime returns when JetStream stored message seq of stream.
func (b *Broker) MsgTime(ctx context.Context, stream string, seq uint64) (time.Time, error) {
	s, err := b.JS.Stream(ctx, stream)
	if err != nil {
		return time.Time{}, err
	}
	m, err := s.GetMsg(ctx, seq)
	if err != nil {
		return time.Time{}, err
	}
	return m.Time, nil
}
