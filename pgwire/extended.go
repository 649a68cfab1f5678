package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/metrics"
	"streamdb/sqlerr"
	"streamdb/types"
)

// statement is a prepared statement of the extended protocol.
type statement struct {
	prep   Prepared // nil for an empty query string
	sql    string   // the statement's text, for pg_stat_activity
	params []types.Type
	cols   []types.Column
	// origins are the columns' origins (nil: unknown).
	origins []ColumnOrigin
}

// portal is a bound statement, ready to execute.
type portal struct {
	stmt    *statement
	params  []types.Datum
	formats []int16 // one result format code per column; nil means text

	// started is set by the first Execute, which runs the statement to
	// completion; rows beyond its row limit wait in held for later
	// Executes, and tag is sent once they are all sent.
	started bool
	tag     string
	held    rowBuffer
}

// extError reports an error in an extended-protocol message; messages are
// then discarded until Sync, as PostgreSQL does.
func (c *conn) extError(err error) {
	c.sendError(err)
	c.ignoreTillSync = true
}

func (c *conn) parse(m *pgproto3.Parse) {
	if m.Name != "" {
		if _, ok := c.stmts[m.Name]; ok {
			c.extError(sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement \"%s\" already exists", m.Name))
			return
		}
	}
	if err := c.checkQueryLength(m.Query); err != nil {
		c.extError(err)
		return
	}
	declared := make([]types.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		t, ok := types.FromOID(oid)
		if !ok {
			c.extError(sqlerr.New(sqlerr.FeatureNotSupported, "parameter $%d has unsupported type (OID %d)", i+1, oid))
			return
		}
		declared[i] = t
	}
	stmts, err := c.sess.Split(m.Query)
	if err != nil {
		c.extError(err)
		return
	}
	st := &statement{}
	switch len(stmts) {
	case 0:
	case 1:
		offset, _ := locate(m.Query, stmts[0], 0)
		ctx, done := c.beginRun()
		p, err := c.sess.Prepare(ctx, stmts[0], declared)
		done()
		if err != nil {
			c.extError(shiftPosition(runError(ctx, err), offset))
			return
		}
		st = &statement{prep: p, sql: stmts[0], params: p.ParamTypes(), cols: p.Columns(), origins: columnOrigins(p)}
	default:
		c.extError(sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement"))
		return
	}
	c.stmts[m.Name] = st
	c.w.send(&pgproto3.ParseComplete{})
}

func (c *conn) bind(m *pgproto3.Bind) {
	st, ok := c.stmts[m.PreparedStatement]
	if !ok {
		c.extError(sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", m.PreparedStatement))
		return
	}
	if m.DestinationPortal != "" {
		if _, ok := c.portals[m.DestinationPortal]; ok {
			c.extError(sqlerr.New(sqlerr.DuplicateCursor, "portal \"%s\" already exists", m.DestinationPortal))
			return
		}
	}
	if len(m.Parameters) != len(st.params) {
		c.extError(sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement \"%s\" requires %d",
			len(m.Parameters), m.PreparedStatement, len(st.params)))
		return
	}
	params, err := decodeParams(st.params, m.ParameterFormatCodes, m.Parameters)
	if err != nil {
		c.extError(err)
		return
	}
	formats, err := formatCodes(m.ResultFormatCodes, len(st.cols), "result")
	if err != nil {
		c.extError(err)
		return
	}
	c.portals[m.DestinationPortal] = &portal{stmt: st, params: params, formats: formats}
	c.w.send(&pgproto3.BindComplete{})
}

func (c *conn) describe(m *pgproto3.Describe) {
	switch m.ObjectType {
	case 'S':
		st, ok := c.stmts[m.Name]
		if !ok {
			c.extError(sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", m.Name))
			return
		}
		oids := make([]uint32, len(st.params))
		for i, t := range st.params {
			oids[i] = t.OID()
		}
		c.w.send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		c.describeRows(st.cols, nil, st.origins)
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			if d, isD := c.sess.(CursorDescriber); isD && m.Name != "" {
				if cols, found := d.CursorColumns(m.Name); found {
					c.describeRows(cols, nil, nil)
					return
				}
			}
			c.extError(sqlerr.New(sqlerr.InvalidCursorName, "portal \"%s\" does not exist", m.Name))
			return
		}
		c.describeRows(p.stmt.cols, p.formats, p.stmt.origins)
	default:
		c.extError(sqlerr.New(sqlerr.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType))
	}
}

func (c *conn) describeRows(cols []types.Column, formats []int16, origins []ColumnOrigin) {
	if cols == nil {
		c.w.send(&pgproto3.NoData{})
		return
	}
	c.w.send(rowDescription(cols, formats, origins))
}

// execute runs a portal. The first Execute runs the statement to the end;
// with a row limit, the rows beyond it are held in the portal and the
// client gets PortalSuspended, and later Executes send the held rows.
func (c *conn) execute(m *pgproto3.Execute) {
	p, ok := c.portals[m.Portal]
	if !ok {
		c.extError(sqlerr.New(sqlerr.InvalidCursorName, "portal \"%s\" does not exist", m.Portal))
		return
	}
	if p.stmt.prep == nil {
		c.w.send(&pgproto3.EmptyQueryResponse{})
		return
	}
	if p.started {
		p.held.send(c.w, int64(m.MaxRows))
	} else {
		p.started = true
		c.backend.active(p.stmt.sql)
		ctx, done := c.beginRun()
		sink := &rowSink{c: c, ctx: ctx, cols: p.stmt.cols, formats: p.formats, limit: int64(m.MaxRows)}
		tag, err := p.stmt.prep.Execute(ctx, p.params, sink)
		done()
		if err != nil {
			// A failed portal cannot be resumed.
			delete(c.portals, m.Portal)
			c.extError(runError(ctx, err))
			return
		}
		sink.endCopyOut()
		p.tag, p.held = tag, sink.held
	}
	if p.held.remaining() > 0 {
		c.w.send(&pgproto3.PortalSuspended{})
		return
	}
	metrics.Queries.WithLabelValues("ok").Inc()
	c.w.send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
}

func (c *conn) closeObject(m *pgproto3.Close) {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		delete(c.portals, m.Name)
	default:
		c.extError(sqlerr.New(sqlerr.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType))
		return
	}
	c.w.send(&pgproto3.CloseComplete{})
}

// sync ends an extended-protocol batch. Portals live until the end of the
// transaction, as in PostgreSQL: outside a transaction block they are all
// dropped here.
func (c *conn) sync() {
	c.ignoreTillSync = false
	if c.sess.TxStatus() == 'I' {
		clear(c.portals)
	}
	c.readyForQuery()
}
