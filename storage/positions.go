package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// SourcePosition is where one source of one view stands at the end of a
// committed epoch: the JetStream stream sequence of the last message the
// view has consumed, and how many messages it skipped as malformed.
type SourcePosition struct {
	Seq     uint64
	Skipped uint64
}

func offsetsPrefix(obj uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{prefixOffsets}, obj)
}

func offsetKey(obj uint32, source uint16) []byte {
	return binary.BigEndian.AppendUint16(offsetsPrefix(obj), source)
}

// PutPosition records a source position of obj in b.
func PutPosition(b *pebble.Batch, obj uint32, source uint16, p SourcePosition) error {
	v := binary.BigEndian.AppendUint64(nil, p.Seq)
	v = binary.BigEndian.AppendUint64(v, p.Skipped)
	return b.Set(offsetKey(obj, source), v, nil)
}

// Position returns the committed position of source of obj (zero if none).
func (s *Store) Position(obj uint32, source uint16) (SourcePosition, error) {
	v, ok, err := s.Get(offsetKey(obj, source))
	if err != nil || !ok {
		return SourcePosition{}, err
	}
	return decodePosition(obj, v)
}

// PositionAt returns the position of source of obj in a snapshot (zero if
// none): the position that the snapshot's state of obj covers.
func PositionAt(snap *pebble.Snapshot, obj uint32, source uint16) (SourcePosition, error) {
	v, closer, err := snap.Get(offsetKey(obj, source))
	if errors.Is(err, pebble.ErrNotFound) {
		return SourcePosition{}, nil
	}
	if err != nil {
		return SourcePosition{}, err
	}
	defer closer.Close()
	return decodePosition(obj, v)
}

func decodePosition(obj uint32, v []byte) (SourcePosition, error) {
	if len(v) != 16 {
		return SourcePosition{}, fmt.Errorf("source position of object %d: bad value length %d", obj, len(v))
	}
	return SourcePosition{Seq: binary.BigEndian.Uint64(v), Skipped: binary.BigEndian.Uint64(v[8:])}, nil
}

// PutEpoch records the number of the epoch a batch commits.
func PutEpoch(b *pebble.Batch, epoch uint64) error {
	return b.Set(metaKey("epoch"), binary.BigEndian.AppendUint64(nil, epoch), nil)
}

// Epoch returns the newest committed epoch.
func (s *Store) Epoch() (uint64, error) {
	v, ok, err := s.Get(metaKey("epoch"))
	if err != nil || !ok {
		return 0, err
	}
	return binary.BigEndian.Uint64(v), nil
}
