package sql

import (
	"context"
	"fmt"
	"strings"

	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// SQL-level PREPARE, EXECUTE and DEALLOCATE. A statement PREPARE makes is
// kept by the session under its name, with the types of its parameters
// (declared, or inferred at PREPARE). EXECUTE plans it again each time
// (as PostgreSQL replans a statement whose objects changed), so it always
// sees the current catalog, and evaluates its arguments as the
// parameters' types. Statements made by the protocol's Parse messages
// live in the connection (pgwire); DEALLOCATE and DISCARD ALL remove
// both kinds, but a name is checked against its own kind only.

// sqlPrepared is one statement made by SQL PREPARE.
type sqlPrepared struct {
	body   string
	params []types.Type
}

// runPrepare runs PREPARE.
func (s *session) runPrepare(ctx context.Context, n *front.Prepare) (string, error) {
	return "PREPARE", s.sqlPrepare(ctx, n)
}

func (s *session) sqlPrepare(ctx context.Context, n *front.Prepare) error {
	if _, exists := s.named[n.Name]; exists {
		return sqlerr.New(sqlerr.DuplicatePreparedStatement, "prepared statement %q already exists", n.Name)
	}
	var declared []types.Type
	if len(n.Types) > 0 {
		// The declared types resolve as casts do.
		casts := make([]string, len(n.Types))
		for i, t := range n.Types {
			casts[i] = "NULL::" + t
		}
		p, err := s.Prepare(ctx, "SELECT "+strings.Join(casts, ", "), nil)
		if err != nil {
			return err
		}
		for _, c := range p.Columns() {
			declared = append(declared, c.Type)
		}
	}
	// Planned now, so that PREPARE reports what is wrong with it.
	p, err := s.Prepare(ctx, n.Body, declared)
	if err != nil {
		if se, ok := err.(*sqlerr.Error); ok && se.Position > 0 {
			se.Position += n.BodyChars
		}
		return err
	}
	if s.named == nil {
		s.named = map[string]*sqlPrepared{}
	}
	s.named[n.Name] = &sqlPrepared{body: n.Body, params: p.ParamTypes()}
	return nil
}

// prepareExecute plans the named statement for its columns; running it
// evaluates the arguments and runs the statement.
func (s *session) prepareExecute(ctx context.Context, n *front.Execute) (*prepared, error) {
	sp, ok := s.named[n.Name]
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", n.Name)
	}
	if len(n.Args) != len(sp.params) {
		err := sqlerr.New(sqlerr.SyntaxError, "wrong number of parameters for prepared statement %q", n.Name)
		err.Detail = fmt.Sprintf("Expected %d parameters but got %d.", len(sp.params), len(n.Args))
		return nil, err
	}
	inner, err := s.Prepare(ctx, sp.body, sp.params)
	if err != nil {
		return nil, err
	}
	return &prepared{cols: inner.Columns(), run: func(ctx context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		vals, err := s.executeArgs(ctx, n.Args, sp.params)
		if err != nil {
			return "", err
		}
		return inner.Execute(ctx, vals, w)
	}}, nil
}

// executeArgs evaluates EXECUTE's arguments, each cast to its
// parameter's type.
func (s *session) executeArgs(ctx context.Context, args []string, params []types.Type) ([]types.Datum, error) {
	if len(args) == 0 {
		return nil, nil
	}
	casts := make([]string, len(args))
	for i, a := range args {
		casts[i] = fmt.Sprintf("CAST((%s) AS %s)", a, params[i].String())
	}
	p, err := s.Prepare(ctx, "SELECT "+strings.Join(casts, ", "), nil)
	if err != nil {
		return nil, err
	}
	var rows rowCollector
	if _, err := p.Execute(ctx, nil, &rows); err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, sqlerr.New(sqlerr.InternalError, "EXECUTE's arguments gave %d rows", len(rows))
	}
	return rows[0], nil
}

// deallocateNamed removes SQL-level prepared statements: the named one
// (reporting whether it existed), or all of them with name "".
func (s *session) deallocateNamed(name string) bool {
	if name == "" {
		s.named = nil
		return true
	}
	_, ok := s.named[name]
	delete(s.named, name)
	return ok
}
