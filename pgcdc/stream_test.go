package pgcdc

import (
	"context"
	"encoding/binary"
	"testing"
)

func keepalive(end uint64) []byte {
	b := []byte{'k'}
	b = binary.BigEndian.AppendUint64(b, end)
	b = binary.BigEndian.AppendUint64(b, 0) // server time
	return append(b, 0)                     // no reply requested
}

func xlogData(end uint64, wal []byte) []byte {
	b := []byte{'w'}
	b = binary.BigEndian.AppendUint64(b, end) // WAL start
	b = binary.BigEndian.AppendUint64(b, end) // server WAL end
	b = binary.BigEndian.AppendUint64(b, 0)   // server time
	return append(b, wal...)
}

func beginMsg(final uint64) []byte {
	b := []byte{'B'}
	b = binary.BigEndian.AppendUint64(b, final)
	b = binary.BigEndian.AppendUint64(b, 0) // commit time
	return binary.BigEndian.AppendUint32(b, 7)
}

func commitMsg(commit, end uint64) []byte {
	b := []byte{'C', 0}
	b = binary.BigEndian.AppendUint64(b, commit)
	b = binary.BigEndian.AppendUint64(b, end)
	return binary.BigEndian.AppendUint64(b, 0) // commit time
}

// TestIdleEnd: the stream reports the source idle, with the position it
// was idle at, only while its newest message is a keepalive outside a
// transaction; any data clears it before the server's end moves, so a
// position read with the idleness never covers a transaction received
// after it.
func TestIdleEnd(t *testing.T) {
	ctx := context.Background()
	s := &Stream{relations: map[uint32]*Relation{}}
	step := func(what string, msg []byte, wantEnd LSN, wantIdle bool) *Txn {
		t.Helper()
		txn, err := s.copyData(ctx, msg)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if end, idle := s.IdleEnd(); end != wantEnd || idle != wantIdle {
			t.Fatalf("%s: IdleEnd() = %s, %v; want %s, %v", what, end, idle, wantEnd, wantIdle)
		}
		return txn
	}
	step("a keepalive at 0/100", keepalive(0x100), 0x100, true)
	step("a transaction's begin", xlogData(0x180, beginMsg(0x200)), 0, false)
	step("a keepalive inside the transaction", keepalive(0x190), 0, false)
	if txn := step("the transaction's commit", xlogData(0x200, commitMsg(0x1f0, 0x200)), 0, false); txn == nil || txn.End != 0x200 {
		t.Fatalf("the commit returned %+v, want the transaction ending at 0/200", txn)
	}
	if s.ServerEnd() != 0x200 {
		t.Fatalf("ServerEnd() = %s, want 0/200", s.ServerEnd())
	}
	step("a keepalive after the commit", keepalive(0x230), 0x230, true)
}
