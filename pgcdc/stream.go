package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// Op is what a change does.
type Op byte

const (
	OpInsert Op = 'I'
	OpUpdate Op = 'U'
	OpDelete Op = 'D'
	// OpTruncate empties the relations in Change.Truncated.
	OpTruncate Op = 'T'
)

// Value is one column of a changed row, as text.
type Value struct {
	Text []byte
	Null bool
	// Unchanged: a TOASTed value the update did not change, so pgoutput
	// did not send it; the row's previous value stands.
	Unchanged bool
}

// Relation is a table as the replication stream describes it. The
// source sends it again after a change of the table's columns, and the
// changes that follow point to the new one.
type Relation struct {
	ID           uint32
	Schema, Name string
	Columns      []string
	// Types and Mods are each column's type oid and type modifier.
	Types []uint32
	Mods  []int32
}

// Change is one row change (or a TRUNCATE) of a transaction.
type Change struct {
	Op  Op
	Rel *Relation
	// New is the row after an insert or update.
	New []Value
	// Old is the row's replica identity before an update that changed
	// it, or before a delete (its key columns; others are Null); nil for
	// an update that kept its key.
	Old       []Value
	Truncated []*Relation
}

// Txn is one committed source transaction.
type Txn struct {
	// End is the position just past its commit record: once a consumer
	// holds Txn, the source need not send anything before End again.
	End        LSN
	CommitTime time.Time
	Changes    []Change
}

// Stream receives a slot's transactions in commit order.
type Stream struct {
	conn      *pgconn.PgConn
	relations map[uint32]*Relation
	// confirmed is what the consumer has made durable (Confirm).
	confirmed atomic.Uint64
	// serverEnd is the newest end of the source's WAL the server told of.
	serverEnd atomic.Uint64
	// idleEnd is the WAL end the newest message reported if that message
	// was a keepalive outside a transaction, 0 otherwise: the source had
	// then sent every transaction that ends at or before it. It is one
	// value so that whether the source was idle and where it was are read
	// together (IdleEnd): a position read apart from the idleness may
	// already cover a transaction received after it.
	idleEnd    atomic.Uint64
	lastStatus time.Time
	sent       LSN // the position the last status update reported
	cur        *Txn
}

// statusInterval is how often the stream tells the source its position
// even when idle (wal_sender_timeout is a minute by default);
// receiveWait bounds each wait for a message, so that a confirmed
// position reaches the source soon after Confirm.
const (
	statusInterval = 10 * time.Second
	receiveWait    = time.Second
)

// StartStream starts streaming slot's changes of publication pub after
// from (the transactions that end after it).
func StartStream(ctx context.Context, ep Endpoint, slot, pub string, from LSN) (*Stream, error) {
	conn, err := connectReplication(ctx, ep)
	if err != nil {
		return nil, err
	}
	err = pglogrepl.StartReplication(ctx, conn, quoteIdent(slot), from, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + escapeLiteral(pub) + "'"}})
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("starting replication from slot %q: %w", slot, err)
	}
	s := &Stream{conn: conn, relations: map[uint32]*Relation{}}
	s.confirmed.Store(uint64(from))
	return s, nil
}

func escapeLiteral(s string) string {
	out := ""
	for _, r := range s {
		if r == '\'' {
			out += "''"
		} else {
			out += string(r)
		}
	}
	return out
}

// Close ends the stream.
func (s *Stream) Close(ctx context.Context) { s.conn.Close(ctx) }

// Confirm records that everything up to lsn is durable at the consumer:
// the slot may let it go. Next tells the source (pgconn allows one
// goroutine at a time), within about a second. Safe to call while
// another goroutine is in Next.
func (s *Stream) Confirm(lsn LSN) {
	for {
		cur := s.confirmed.Load()
		if uint64(lsn) <= cur || s.confirmed.CompareAndSwap(cur, uint64(lsn)) {
			return
		}
	}
}

// IdleEnd reports whether the source's newest message said it had
// nothing more to send, and if so the WAL position it had sent
// everything up to: every transaction ending at or before it was
// returned by Next before the message that said so was read (Next
// returns a transaction at its commit, before it reads on). Safe to call
// while another goroutine is in Next.
func (s *Stream) IdleEnd() (LSN, bool) {
	end := LSN(s.idleEnd.Load())
	return end, end != 0
}

// ServerEnd is the newest WAL position the source reported.
func (s *Stream) ServerEnd() LSN { return LSN(s.serverEnd.Load()) }

func (s *Stream) sendStatus(ctx context.Context) error {
	s.lastStatus = time.Now()
	lsn := LSN(s.confirmed.Load())
	s.sent = lsn
	return pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: lsn})
}

// Next returns the next committed transaction. It answers the source's
// keepalives meanwhile.
func (s *Stream) Next(ctx context.Context) (*Txn, error) {
	for {
		if time.Since(s.lastStatus) >= statusInterval || LSN(s.confirmed.Load()) != s.sent {
			if err := s.sendStatus(ctx); err != nil {
				return nil, err
			}
		}
		rctx, cancel := context.WithDeadline(ctx, time.Now().Add(receiveWait))
		msg, err := s.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil && pgconn.Timeout(err) {
				continue
			}
			return nil, err
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			return nil, pgconn.ErrorResponseToPgError(m)
		case *pgproto3.CopyData:
			txn, err := s.copyData(ctx, m.Data)
			if err != nil || txn != nil {
				return txn, err
			}
		default:
			return nil, fmt.Errorf("unexpected message %T from the source", msg)
		}
	}
}

func (s *Stream) copyData(ctx context.Context, data []byte) (*Txn, error) {
	if len(data) == 0 {
		return nil, errors.New("empty replication message")
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		k, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return nil, err
		}
		s.noteServerEnd(k.ServerWALEnd)
		if s.cur == nil {
			s.idleEnd.Store(uint64(k.ServerWALEnd))
		} else {
			s.idleEnd.Store(0)
		}
		if k.ReplyRequested {
			return nil, s.sendStatus(ctx)
		}
		return nil, nil
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return nil, err
		}
		s.idleEnd.Store(0)
		s.noteServerEnd(x.ServerWALEnd)
		return s.decode(x.WALData)
	}
	return nil, nil
}

func (s *Stream) noteServerEnd(l LSN) {
	if uint64(l) > s.serverEnd.Load() {
		s.serverEnd.Store(uint64(l))
	}
}

// decode adds one pgoutput message to the transaction being read and
// returns the transaction at its commit.
func (s *Stream) decode(wal []byte) (*Txn, error) {
	msg, err := pglogrepl.Parse(wal)
	if err != nil {
		return nil, fmt.Errorf("decoding a replication message: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		r := &Relation{ID: m.RelationID, Schema: m.Namespace, Name: m.RelationName}
		for _, c := range m.Columns {
			r.Columns = append(r.Columns, c.Name)
			r.Types = append(r.Types, c.DataType)
			r.Mods = append(r.Mods, c.TypeModifier)
		}
		s.relations[m.RelationID] = r
	case *pglogrepl.BeginMessage:
		s.cur = &Txn{CommitTime: m.CommitTime}
	case *pglogrepl.CommitMessage:
		t := s.cur
		s.cur = nil
		if t == nil {
			return nil, errors.New("a commit without its transaction's start")
		}
		t.End = m.TransactionEndLSN
		return t, nil
	case *pglogrepl.InsertMessage:
		return nil, s.add(m.RelationID, Change{Op: OpInsert, New: values(m.Tuple)})
	case *pglogrepl.UpdateMessage:
		return nil, s.add(m.RelationID, Change{Op: OpUpdate, New: values(m.NewTuple), Old: values(m.OldTuple)})
	case *pglogrepl.DeleteMessage:
		return nil, s.add(m.RelationID, Change{Op: OpDelete, Old: values(m.OldTuple)})
	case *pglogrepl.TruncateMessage:
		ch := Change{Op: OpTruncate}
		for _, id := range m.RelationIDs {
			r, ok := s.relations[id]
			if !ok {
				return nil, fmt.Errorf("a truncate of relation %d the source never described", id)
			}
			ch.Truncated = append(ch.Truncated, r)
		}
		if s.cur == nil {
			return nil, errors.New("a change outside a transaction")
		}
		s.cur.Changes = append(s.cur.Changes, ch)
	}
	return nil, nil
}

func (s *Stream) add(rel uint32, ch Change) error {
	r, ok := s.relations[rel]
	if !ok {
		return fmt.Errorf("a change to relation %d the source never described", rel)
	}
	if s.cur == nil {
		return errors.New("a change outside a transaction")
	}
	ch.Rel = r
	s.cur.Changes = append(s.cur.Changes, ch)
	return nil
}

func values(t *pglogrepl.TupleData) []Value {
	if t == nil {
		return nil
	}
	out := make([]Value, len(t.Columns))
	for i, c := range t.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeNull:
			out[i].Null = true
		case pglogrepl.TupleDataTypeToast:
			out[i].Unchanged = true
		default:
			out[i].Text = append([]byte{}, c.Data...)
		}
	}
	return out
}
