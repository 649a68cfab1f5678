package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// LSN is a position in the source's write-ahead log.
type LSN = pglogrepl.LSN

// ParseLSN reads an LSN's text form (16/B374D848).
func ParseLSN(s string) (LSN, error) { return pglogrepl.ParseLSN(s) }

// Slot is a replication slot just created, with its exported snapshot:
// Copy reads the tables as of Point while the slot is open, and Stream
// starts after it.
type Slot struct {
	Name  string
	Point LSN
	conn  *pgconn.PgConn
	snap  string
	ep    Endpoint
}

// CreateSlot creates logical replication slot name (plugin pgoutput)
// and keeps its snapshot until Close.
func CreateSlot(ctx context.Context, ep Endpoint, name string) (*Slot, error) {
	conn, err := connectReplication(ctx, ep)
	if err != nil {
		return nil, err
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, quoteIdent(name), "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("creating replication slot %q: %w", name, err)
	}
	point, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	return &Slot{Name: name, Point: point, conn: conn, snap: res.SnapshotName, ep: ep}, nil
}

// Close ends the slot's snapshot (the slot stays).
func (s *Slot) Close(ctx context.Context) { s.conn.Close(ctx) }

// Copy reads every row of each table as of the slot's snapshot and
// hands it to row, as text values (nil for NULL) in the table's column
// order, one row at a time as the source sends them: it holds no more
// than a row.
func (s *Slot) Copy(ctx context.Context, tables []*Table, row func(t *Table, values [][]byte) error) error {
	conn, err := connectSQL(ctx, s.ep)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+s.snap+"'"); err != nil {
		return fmt.Errorf("reading the slot's snapshot: %w", err)
	}
	for _, t := range tables {
		cols := ""
		for i, c := range t.Columns {
			if i > 0 {
				cols += ", "
			}
			cols += quoteIdent(c.Name)
		}
		rr := conn.PgConn().ExecParams(ctx, "SELECT "+cols+" FROM "+t.QualifiedName(), nil, nil, nil, []int16{0})
		for rr.NextRow() {
			// The values point into the connection's buffer: one copy
			// per row, which row may keep.
			vals := rr.Values()
			size := 0
			for _, v := range vals {
				size += len(v)
			}
			buf := make([]byte, 0, size)
			out := make([][]byte, len(vals))
			for i, v := range vals {
				if v != nil {
					buf = append(buf, v...)
					out[i] = buf[len(buf)-len(v) : len(buf) : len(buf)]
				}
			}
			if err := row(t, out); err != nil {
				rr.Close()
				return err
			}
		}
		if _, err := rr.Close(); err != nil {
			return fmt.Errorf("copying %s: %w", t.QualifiedName(), err)
		}
	}
	return tx.Commit(ctx)
}

// SlotInfo is what pg_replication_slots says of a slot.
type SlotInfo struct {
	Exists bool
	// Confirmed is confirmed_flush_lsn: the source keeps what follows.
	Confirmed LSN
	// Current is pg_current_wal_lsn() on the source.
	Current LSN
	Active  bool
}

// DescribeSlot reads slot name's state on the source.
func DescribeSlot(ctx context.Context, ep Endpoint, name string) (SlotInfo, error) {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return SlotInfo{}, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var info SlotInfo
	var confirmed *string
	var current string
	err = conn.QueryRow(ctx, `SELECT confirmed_flush_lsn::text, active, pg_current_wal_lsn()::text
		FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&confirmed, &info.Active, &current)
	if errors.Is(err, pgx.ErrNoRows) {
		err = conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&current)
		if err != nil {
			return info, err
		}
		info.Current, err = pglogrepl.ParseLSN(current)
		return info, err
	}
	if err != nil {
		return info, err
	}
	info.Exists = true
	if confirmed != nil {
		if info.Confirmed, err = pglogrepl.ParseLSN(*confirmed); err != nil {
			return info, err
		}
	}
	info.Current, err = pglogrepl.ParseLSN(current)
	return info, err
}

// DropSlot drops slot name if it exists, ending a connection that holds
// it.
func DropSlot(ctx context.Context, ep Endpoint, name string) error {
	conn, err := connectSQL(ctx, ep)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = $1 AND active_pid IS NOT NULL`, name)
	if err != nil {
		return err
	}
	// The terminated walsender lets go of the slot a moment later.
	for tries := 0; ; tries++ {
		_, err = conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, name)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55006" || tries == 50 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
