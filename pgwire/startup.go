package pgwire

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"streamdb/sqlerr"
)

const (
	// startupTimeout bounds the whole handshake, as PostgreSQL's
	// authentication_timeout does.
	startupTimeout = 60 * time.Second
	// ServerVersion is reported as server_version. Drivers parse it, so it
	// is a plain PostgreSQL version number.
	ServerVersion = "15.0"
	// maxNegotiations bounds SSLRequest/GSSEncRequest round trips.
	maxNegotiations = 2
)

// startup runs the handshake: encryption requests are declined, a
// CancelRequest is handled (and the connection ends), and a StartupMessage
// opens a session with trust authentication. It reports whether the
// connection is ready for queries.
func (c *conn) startup() bool {
	c.setReadDeadline(time.Now().Add(startupTimeout))
	for negotiations := 0; ; negotiations++ {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			c.readFailed(err)
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if negotiations >= maxNegotiations {
				c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "too many encryption requests"))
				return false
			}
			// 'N': no TLS, no GSS encryption; the client continues in the clear.
			c.w.writeRaw([]byte{'N'})
			if c.w.flush() != nil {
				return false
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return false
		case *pgproto3.StartupMessage:
			return c.accept(m)
		default:
			c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "unexpected startup message %T", msg))
			return false
		}
	}
}

// accept opens the session for a StartupMessage and sends the
// authentication and parameter messages that drivers wait for.
func (c *conn) accept(m *pgproto3.StartupMessage) bool {
	params := maps.Clone(m.Parameters)
	if params["user"] == "" {
		c.sendFatal(sqlerr.New(codeInvalidAuthorization, "no PostgreSQL user name specified in startup packet"))
		return false
	}
	// Only protocol 3.0 is spoken, and no protocol extension ("_pq_."
	// options): say so, and the client falls back or gives up.
	var unknownOptions []string
	for k := range params {
		if strings.HasPrefix(k, "_pq_.") {
			unknownOptions = append(unknownOptions, k)
			delete(params, k)
		}
	}
	if m.ProtocolVersion != pgproto3.ProtocolVersion30 || len(unknownOptions) > 0 {
		slices.Sort(unknownOptions)
		c.w.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknownOptions})
	}

	sess, err := c.srv.engine.NewSession(c.ctx, params)
	if err != nil {
		e := sqlerr.From(err)
		c.log.Info("pgwire: session refused", "err", err)
		c.sendFatal(e)
		return false
	}
	c.sess = sess
	c.srv.register(c)
	c.log = c.log.With("pid", c.pid, "user", params["user"])

	c.w.send(&pgproto3.AuthenticationOk{})
	for _, p := range parameterStatus(params) {
		c.w.send(&p)
	}
	c.w.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret})
	c.setReadDeadline(time.Time{})
	c.readyForQuery()
	c.log.Debug("pgwire: connection ready")
	return c.w.err == nil
}

// parameterStatus lists the run-time parameters reported at startup, in the
// set and spelling PostgreSQL 15 uses.
func parameterStatus(params map[string]string) []pgproto3.ParameterStatus {
	return []pgproto3.ParameterStatus{
		{Name: "application_name", Value: params["application_name"]},
		{Name: "client_encoding", Value: "UTF8"},
		{Name: "DateStyle", Value: "ISO, MDY"},
		{Name: "default_transaction_read_only", Value: "off"},
		{Name: "in_hot_standby", Value: "off"},
		{Name: "integer_datetimes", Value: "on"},
		{Name: "IntervalStyle", Value: "postgres"},
		{Name: "is_superuser", Value: "on"},
		{Name: "server_encoding", Value: "UTF8"},
		{Name: "server_version", Value: ServerVersion},
		{Name: "session_authorization", Value: params["user"]},
		{Name: "standard_conforming_strings", Value: "on"},
		{Name: "TimeZone", Value: "UTC"},
	}
}
