package pgwire

import (
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/metrics"
	"streamdb/sqlerr"
)

// simpleQuery runs a Query message: every statement in order, each with
// its own RowDescription, rows and CommandComplete, stopping at the first
// error; then one ReadyForQuery.
func (c *conn) simpleQuery(sql string) {
	// Not deferred: after a panic the client must get the FATAL error, not
	// ReadyForQuery.
	if err := c.checkQueryLength(sql); err != nil {
		c.sendError(err)
	} else {
		c.runQuery(sql)
	}
	c.readyForQuery()
}

func (c *conn) runQuery(sql string) {
	// As in PostgreSQL, a simple query replaces the unnamed statement and
	// portal.
	delete(c.stmts, "")
	delete(c.portals, "")

	stmts, err := c.sess.Split(sql)
	if err != nil {
		c.sendError(err)
		return
	}
	if len(stmts) == 0 {
		c.w.send(&pgproto3.EmptyQueryResponse{})
		return
	}
	from := 0
	for _, stmt := range stmts {
		var offset int
		offset, from = locate(sql, stmt, from)
		if err := c.runSimple(stmt); err != nil {
			c.sendError(shiftPosition(err, offset))
			return
		}
	}
}

// runSimple prepares and executes one statement of a simple query, with
// text results.
func (c *conn) runSimple(stmt string) error {
	c.backend.active(stmt)
	ctx, done := c.beginRun()
	defer done()
	p, err := c.sess.Prepare(ctx, stmt, nil)
	if err != nil {
		return runError(ctx, err)
	}
	if n := len(p.ParamTypes()); n > 0 {
		return sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1")
	}
	cols := p.Columns()
	if cols != nil {
		c.w.send(rowDescription(cols, nil, columnOrigins(p)))
	}
	sink := &rowSink{c: c, ctx: ctx, cols: cols}
	tag, err := p.Execute(ctx, nil, sink)
	if err != nil {
		return runError(ctx, err)
	}
	sink.endCopyOut()
	metrics.Queries.WithLabelValues("ok").Inc()
	c.w.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
	return nil
}

// locate finds stmt, a piece returned by Session.Split, in sql at or after
// byte offset from. It returns the piece's offset in characters (0 if it
// cannot be found: Split may have rewritten it) and where to search next.
func locate(sql, stmt string, from int) (runes, next int) {
	i := strings.Index(sql[from:], stmt)
	if i < 0 {
		return 0, from
	}
	return utf8.RuneCountInString(sql[:from+i]), from + i + len(stmt)
}
