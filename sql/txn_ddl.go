package sql

import (
	"context"
	"strings"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/types"
)

// DDL inside a transaction block takes effect when it runs (txn.go), so
// ROLLBACK cannot undo it as PostgreSQL would. The block remembers the
// DDL it ran, so that ROLLBACK, COMMIT of an aborted block, and ROLLBACK
// TO a savepoint taken before the DDL warn which statements stay in
// effect, instead of letting the client believe they were undone.

// blockDDL is one catalog-changing statement a block ran.
type blockDDL struct {
	text string
	// seq is the block's savepoint count when it ran: ROLLBACK TO a
	// savepoint whose seq is at most this one would undo it.
	seq int
}

// catalogCommand names the command st runs when it changes the catalog
// (not the rows of a table or stream, which the block does undo), or is
// "" for any other statement.
func catalogCommand(st *front.Statement) string {
	switch st.Node.(type) {
	case *front.Copy, *front.Truncate, *front.RollbackTo, *front.RefreshMaterializedView:
		return ""
	}
	name := writeCommand(st)
	switch name {
	case "INSERT", "UPDATE", "DELETE":
		return ""
	}
	return name
}

// noteBlockDDL makes p, a catalog-changing statement, record itself in
// the open block when it succeeds there.
func (s *session) noteBlockDDL(st *front.Statement, p *prepared) *prepared {
	if p == nil || p.run == nil || catalogCommand(st) == "" {
		return p
	}
	run := p.run
	text := clipStatement(st.Text)
	p.run = func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		tag, err := run(ctx, vals, w)
		if err == nil && s.tx != nil {
			s.tx.ddl = append(s.tx.ddl, blockDDL{text: text, seq: s.tx.spSeq})
		}
		return tag, err
	}
	return p
}

// warnDDLKept warns that what the block's DDL did from savepoint seq on
// stays, and forgets those statements. what is the command undoing the
// rest ("ROLLBACK", "ROLLBACK TO SAVEPOINT").
func (s *session) warnDDLKept(ctx context.Context, what string, seq int) {
	if s.tx == nil {
		return
	}
	var kept []string
	i := len(s.tx.ddl)
	for i > 0 && s.tx.ddl[i-1].seq >= seq {
		i--
	}
	for _, d := range s.tx.ddl[i:] {
		kept = append(kept, d.text)
	}
	s.tx.ddl = s.tx.ddl[:i]
	if len(kept) == 0 {
		return
	}
	pgwire.Warning(ctx, what+" did not undo the DDL run in this transaction block",
		strings.Join(kept, "\n"),
		"streamdb applies DDL at once, even inside a transaction block; undo it with DROP or ALTER, or with ROLLBACK TO SAVEPOINT to a savepoint taken outside the block.")
}

// clipStatement is a statement's text on one line, cut to a length a
// message can show.
func clipStatement(text string) string {
	const max = 120
	t := strings.Join(strings.Fields(text), " ")
	if r := []rune(t); len(r) > max {
		t = string(r[:max-3]) + "..."
	}
	return t
}
