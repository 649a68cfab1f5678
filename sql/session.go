package sql

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// session is one client connection's state.
type session struct {
	e *Engine
	// settings holds SET values of this session (client_encoding,
	// application_name, ...), lower-case keys.
	settings map[string]string
	// resetValues are what RESET returns parameters to: the defaults
	// and the startup packet's values (session_settings.go).
	resetValues map[string]string
	// tx is the open transaction block, nil outside one.
	tx *txn
	// user and database are the startup parameters, for the catalog's
	// owner and database names.
	user, database string
	// trustedAnyUser: the user was no created role at login, which only a
	// trusted connection allows; such a session is a superuser.
	trustedAnyUser bool
	// named holds the statements made by SQL PREPARE (prepare_sql.go).
	named map[string]*sqlPrepared
	// seqs is what currval and lastval answer (sequences.go).
	seqs seqSession
	// mirrorWriter: the session of a PostgreSQL source's applier, the
	// one writer of the tables it mirrors.
	mirrorWriter bool
	// alwaysReadOnly: every transaction of the session is read only,
	// whatever its settings say (the console's query page).
	alwaysReadOnly bool
}

func newSession(e *Engine, startup map[string]string) *session {
	s := &session{e: e, settings: map[string]string{}, user: startup["user"], database: startup["database"]}
	s.trustedAnyUser = e.roles.Trusts(s.user)
	s.resetValues = newResetValues(startup)
	for k, v := range s.resetValues {
		s.settings[k] = v
	}
	return s
}

func (s *session) Split(sql string) ([]string, error) { return front.Split(sql), nil }

func (s *session) TxStatus() byte {
	switch {
	case s.tx == nil:
		return 'I'
	case s.tx.failed:
		return 'E'
	}
	return 'T'
}

func (s *session) Close() {
	s.endTx()
	s.e.advisory.releaseAll(s)
	s.closeCursors()
}

func (s *session) Prepare(ctx context.Context, sql string, paramTypes []types.Type) (pgwire.Prepared, error) {
	// statement_timeout bounds parsing and binding too (binder/bind_cancel.go).
	ctx, cancel, timeout := s.statementContext(ctx)
	defer cancel()
	st, err := front.Parse(sql)
	if err == nil {
		err = interruptedBy(ctx, timeout)
	}
	if err != nil {
		s.abort()
		return nil, err
	}
	for _, msg := range st.TruncatedIdentifiers {
		pgwire.NoticeCode(ctx, sqlerr.NameTooLong, msg)
	}
	endsBlock := endsAbortedBlock(st.Node)
	if s.tx != nil && s.tx.failed && !endsBlock {
		return nil, errAborted()
	}
	if n, ok := st.Node.(ast.Node); ok {
		binder.NumberParamMarkers(n)
	}
	if st.Returning != nil {
		// Parsed on its own, the list numbers its markers by its own text
		// (front.Statement.ReturningStatement).
		binder.NumberParamMarkers(&ast.FieldList{Fields: st.Returning})
	}
	params := s.params(st)
	params.Declare(paramTypes, types.Unknown)
	p, err := s.prepareBounded(ctx, timeout, st, params)
	if err != nil {
		s.abort()
		return nil, err
	}
	s.applyFloatDigits(p)
	p = s.psqlSubscribeNotice(st, p)
	run := p.run
	p.run = func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		if s.tx != nil && s.tx.failed && !endsBlock {
			return "", errAborted()
		}
		after, err := s.authorize(st)
		if err != nil {
			s.abort()
			return "", err
		}
		ctx, cancel, timeout := s.statementContext(ctx)
		defer cancel()
		tag, err := run(ctx, vals, w)
		if err == nil && after != nil {
			after()
		}
		if err != nil {
			if timeout() {
				err = errStatementTimeout()
			}
			s.abort()
		}
		return tag, err
	}
	return p, nil
}

// prepareBounded prepares st with ctx, the statement's context bounded by
// statement_timeout (timeout reports that bound ending it): a bind that
// outlasts it, or whose statement is cancelled, stops (binder/bind_cancel.go).
func (s *session) prepareBounded(ctx context.Context, timeout func() bool, st *front.Statement, params *binder.Params) (*prepared, error) {
	defer params.BindContext(ctx)()
	p, err := s.prepare(ctx, st, params)
	if err != nil && timeout() {
		err = errStatementTimeout()
	}
	return p, err
}

// abort marks the open transaction block, if any, as failed.
func (s *session) abort() {
	if s.tx != nil {
		s.tx.failed = true
	}
}

// endsAbortedBlock reports whether a statement may run in an aborted
// transaction block: COMMIT, ROLLBACK and ROLLBACK TO SAVEPOINT.
func endsAbortedBlock(n any) bool {
	switch n := n.(type) {
	case *front.Transaction:
		return n.Action != front.TxnBegin
	case *front.RollbackTo:
		return n.Kind == front.PointSavepoint
	}
	return false
}

// applyFloatDigits makes float columns print with 15 + extra_float_digits
// significant digits when the session set it below 1, as PostgreSQL does
// (at 1 or more it prints the shortest exact form).
func (s *session) applyFloatDigits(p *prepared) {
	efd, err := strconv.Atoi(strings.TrimSpace(s.settings["extra_float_digits"]))
	if err != nil || efd >= 1 {
		return
	}
	efd = max(efd, -15)
	cols := append([]types.Column(nil), p.cols...)
	for i := range cols {
		if cols[i].Type == types.Float8 || cols[i].Type == types.Float4 {
			cols[i].Mod.FloatDigits = 15 + efd
		}
	}
	p.cols = cols
}

func (s *session) prepare(ctx context.Context, st *front.Statement, params *binder.Params) (*prepared, error) {
	effects, err := s.substituteCatalogFunctions(st.Node)
	if err != nil {
		return nil, err
	}
	p, err := s.prepareStatement(ctx, st, params)
	if err == nil {
		p = s.noteBlockDDL(st, s.refuseInReadOnly(st, p))
	}
	if err != nil || len(effects) == 0 {
		return p, err
	}
	run := p.run
	p.run = func(ctx context.Context, vals []types.Datum, w pgwire.RowWriter) (string, error) {
		for _, f := range effects {
			if err := f(ctx); err != nil {
				return "", err
			}
		}
		return run(ctx, vals, w)
	}
	return p, nil
}

// statementContext bounds a statement by the session's statement_timeout
// (0 or unset: no bound). timeout reports whether the bound ended it.
func (s *session) statementContext(ctx context.Context) (context.Context, context.CancelFunc, func() bool) {
	d, _ := parseTimeout("statement_timeout", s.settings["statement_timeout"])
	if d <= 0 {
		return ctx, func() {}, func() bool { return false }
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, func() bool { return errors.Is(ctx.Err(), context.DeadlineExceeded) }
}

// IdleInTransactionTimeout implements pgwire.IdleInTransactionTimeouter:
// the session's idle_in_transaction_session_timeout inside a block.
func (s *session) IdleInTransactionTimeout() time.Duration {
	if s.tx == nil {
		return 0
	}
	d, _ := parseTimeout("idle_in_transaction_session_timeout", s.settings["idle_in_transaction_session_timeout"])
	return d
}

// parseTimeout reads a timeout setting (name) as PostgreSQL does: a number of
// milliseconds, or a number with a unit (us, ms, s, min, h, d).
func parseTimeout(name, v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "'"))
	if v == "" {
		return 0, nil
	}
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || n < 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v).
			WithHint("Give milliseconds, or a number with a unit: 500ms, 10s, 2min.")
	}
	units := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	unit, ok := units[strings.ToLower(strings.TrimSpace(v[i:]))]
	if !ok {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, v).
			WithHint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".")
	}
	return time.Duration(n * float64(unit)), nil
}

// statementName is the leading keywords of a statement, for messages.
func statementName(text string) string {
	f := strings.Fields(text)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.ToUpper(strings.Join(f, " "))
}

// planView parses and binds a view's stored query.
func (e *Engine) planView(query string) (plan.Node, error) {
	st, err := front.Parse(query)
	if err != nil {
		return nil, err
	}
	return e.bindQuery(st, binder.NoParams(st))
}
