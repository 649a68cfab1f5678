package sql

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"streamdb/binder"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// A feed cursor (DECLARE c CURSOR FOR SUBSCRIBE ...) holds a subscription
// and the rows it produced that no FETCH took yet. It lives until CLOSE
// or the end of the session, across transaction blocks (as WITH HOLD).
// A query cursor (DECLARE c CURSOR FOR SELECT ...) has no subscription:
// buf holds the rows of its query not fetched yet (query_cursor.go).
type feedCursor struct {
	cols []types.Column
	sub  *exec.Subscription // nil for a query cursor
	buf  rowBuffer
	f    *feed
	// hold: the cursor survives the end of its transaction block (WITH
	// HOLD, and every feed cursor); tx is the block that declared it, nil
	// outside one. A rolled-back block drops even its held cursors.
	hold bool
	tx   *txn
	// bytes estimates the memory of a query cursor's rows.
	bytes int64
	// A query cursor's scroll option (front.Scroll*), position and the
	// number of rows it gave up from the front of buf (query_cursor_scroll.go).
	scroll    int
	pos, base int64
	// spSeq is the block's savepoint counter at DECLARE.
	spSeq int
}

// close ends the cursor's subscription, if any.
func (c *feedCursor) close() {
	if c.sub != nil {
		c.sub.Close()
	}
}

// rowBuffer is a RowWriter that keeps copies of the rows.
type rowBuffer struct{ rows []types.Row }

func (b *rowBuffer) WriteRow(r types.Row) error {
	b.rows = append(b.rows, append(types.Row(nil), r...))
	return nil
}

// feedCursors holds each session's cursors.
var feedCursors sync.Map // *session -> map[string]*feedCursor

func (s *session) cursors() map[string]*feedCursor {
	m, _ := feedCursors.LoadOrStore(s, map[string]*feedCursor{})
	return m.(map[string]*feedCursor)
}

// closeCursors ends the session's cursors (the session ends).
func (s *session) closeCursors() {
	m, ok := feedCursors.LoadAndDelete(s)
	if !ok {
		return
	}
	for _, c := range m.(map[string]*feedCursor) {
		c.close()
	}
}

// closeAllCursors closes every cursor of the session (CLOSE ALL, DISCARD
// ALL).
func (s *session) closeAllCursors() {
	cs := s.cursors()
	for name, c := range cs {
		c.close()
		delete(cs, name)
	}
}

// runCloseCursor runs CLOSE name and CLOSE ALL.
func (s *session) runCloseCursor(_ context.Context, n *front.CloseCursor) (string, error) {
	cs := s.cursors()
	if n.All {
		s.closeAllCursors()
		return "CLOSE CURSOR ALL", nil
	}
	c, ok := cs[n.Name]
	if !ok {
		return "", sqlerr.New(sqlerr.InvalidCursorName, "cursor %q does not exist", n.Name)
	}
	c.close()
	delete(cs, n.Name)
	return "CLOSE CURSOR", nil
}

func (s *session) prepareDeclare(n *front.DeclareCursor, params *binder.Params) (*prepared, error) {
	if n.Query != nil {
		return s.prepareQueryCursor(n, params)
	}
	sn := n.Subscribe
	opts, err := parseSubscribeOptions(sn.Options)
	if err != nil {
		return nil, err
	}
	d, cols, err := s.feedView("SUBSCRIBE", sn.View)
	if err != nil {
		return nil, err
	}
	return command(func(ctx context.Context) (string, error) {
		cs := s.cursors()
		if _, dup := cs[n.Name]; dup {
			return "", sqlerr.New(sqlerr.DuplicateCursor, "cursor %q already exists", n.Name)
		}
		c := &feedCursor{cols: changeColumns(true, cols), hold: true}
		c.f = &feed{w: &c.buf, ncols: len(cols), progress: opts.progress}
		sub, err := s.e.openFeed(ctx, d, len(cols), sn.AsOf, opts, c.f)
		if err != nil {
			return "", err
		}
		c.sub = sub
		cs[n.Name] = c
		return "DECLARE CURSOR", nil
	}), nil
}

func (s *session) prepareFetch(n *front.Fetch) (*prepared, error) {
	c, ok := s.cursors()[n.Name]
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidCursorName, "cursor %q does not exist", n.Name)
	}
	if n.Timeout != "" {
		d, err := parseTimeout("timeout", n.Timeout)
		if err != nil {
			return nil, err
		}
		return s.fetchPrepared(n, c, &d), nil
	}
	return s.fetchPrepared(n, c, nil), nil
}

// fetchPrepared returns up to n.Count rows of cursor c: those buffered,
// or else the first committed epochs to come. Without a timeout it waits
// for at least one row; with one, it returns what arrived within it
// (perhaps nothing).
func (s *session) fetchPrepared(n *front.Fetch, c *feedCursor, timeout *time.Duration) *prepared {
	cols := c.cols
	if n.Move {
		cols = nil
	}
	return &prepared{cols: cols, run: func(ctx context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		if cur, ok := s.cursors()[n.Name]; !ok || cur != c {
			return "", sqlerr.New(sqlerr.InvalidCursorName, "cursor %q does not exist", n.Name)
		}
		if c.sub == nil {
			return c.scrollFetch(n, w)
		}
		if n.Dir != front.FetchForward {
			return "", errForwardOnly("A SUBSCRIBE cursor reads the view's changes forward only.")
		}
		if n.Count != 0 && len(c.buf.rows) == 0 && c.sub != nil {
			wctx := ctx
			if timeout != nil {
				var cancel context.CancelFunc
				wctx, cancel = context.WithTimeoutCause(ctx, *timeout, errFetchTimeout)
				defer cancel()
			}
			for len(c.buf.rows) == 0 {
				err := pumpFeed(wctx, ctx, c.sub, c.f)
				if errors.Is(err, errFetchTimeout) && ctx.Err() == nil {
					break
				}
				if err != nil {
					return "", err
				}
			}
		}
		k := len(c.buf.rows)
		if n.Count >= 0 && int64(k) > n.Count {
			k = int(n.Count)
		}
		if n.Move {
			c.take(k)
			return fmt.Sprintf("MOVE %d", k), nil
		}
		for _, row := range c.buf.rows[:k] {
			if err := w.WriteRow(row); err != nil {
				return "", err
			}
		}
		c.take(k)
		return fmt.Sprintf("FETCH %d", k), nil
	}}
}

var errFetchTimeout = errors.New("fetch timeout")

// CursorColumns is the row shape of the cursor named name (pgwire's
// CursorDescriber): a cursor DECLAREd in SQL is also a portal of the
// protocol, which clients (psycopg 3) Describe.
func (s *session) CursorColumns(name string) ([]types.Column, bool) {
	c, ok := s.cursors()[name]
	if !ok {
		return nil, false
	}
	return c.cols, true
}
