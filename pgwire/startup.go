package pgwire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net"
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
	// maxAuthMessageSize bounds SASL messages (PG_MAX_AUTH_TOKEN_LENGTH).
	maxAuthMessageSize = 65535
)

// startup runs the handshake: an SSLRequest starts TLS when the server has
// a certificate (and is declined otherwise), a GSSEncRequest is declined, a
// CancelRequest is handled (and the connection ends), and a StartupMessage
// authenticates the client and opens a session. It reports whether the
// connection is ready for queries.
func (c *conn) startup() bool {
	c.setReadDeadline(time.Now().Add(startupTimeout))
	// The SSLRequest and GSSEncRequest read so far, in bytes (8 each).
	var negotiated int64
	if !c.skipForwardMark() {
		return false
	}
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
			negotiated += 8
			_, ssl := m.(*pgproto3.SSLRequest)
			if ssl && c.tls != nil {
				c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "SSLRequest received on a connection that already uses TLS"))
				return false
			}
			if !ssl || c.srv.sec.TLS == nil {
				// 'N': no TLS, no GSS encryption; the client continues in the clear.
				c.w.writeRaw([]byte{'N'})
				if c.w.flush() != nil {
					return false
				}
				continue
			}
			if c.tls == nil && c.inBytes.n != negotiated {
				// Bytes after the SSLRequest were read in the clear; they
				// must not be taken as if they came over TLS (CVE-2021-23214).
				c.sendFatal(&sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: "received unencrypted data after SSL request",
					Detail: "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack."})
				return false
			}
			if !c.startTLS() {
				return false
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return false
		case *pgproto3.StartupMessage:
			if !c.srv.admit() {
				c.sendFatal(sqlerr.New(sqlerr.TooManyConnections, "sorry, too many clients already"))
				return false
			}
			c.admitted = true
			return c.accept(m)
		default:
			c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "unexpected startup message %T", msg))
			return false
		}
	}
}

// startTLS answers an SSLRequest with 'S' and runs the TLS handshake; from
// then on every message goes through TLS.
func (c *conn) startTLS() bool {
	c.w.writeRaw([]byte{'S'})
	if c.w.flush() != nil {
		return false
	}
	tc := tls.Server(c.nc, c.srv.sec.TLS)
	if err := tc.HandshakeContext(c.ctx); err != nil {
		c.log.Info("pgwire: TLS handshake failed", "err", err)
		return false
	}
	c.tls = tc
	c.be = pgproto3.NewBackend(tc, tc)
	c.be.SetMaxBodyLen(maxMessageSize)
	c.w = newMsgWriter(tc)
	return true
}

// accept opens the session for a StartupMessage and sends the
// authentication and parameter messages that drivers wait for.
func (c *conn) accept(m *pgproto3.StartupMessage) bool {
	params := maps.Clone(m.Parameters)
	if params["user"] == "" {
		c.sendFatal(sqlerr.New(sqlerr.InvalidAuthorizationSpecification, "no PostgreSQL user name specified in startup packet"))
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

	scram, refusal := c.srv.sec.Admission(c.nc.RemoteAddr(), c.tls != nil)
	if refusal != nil {
		c.log.Warn("pgwire: connection refused", "user", params["user"], "reason", refusal.Message)
		c.sendFatal(refusal)
		return false
	}
	if scram && !c.authenticate(params["user"]) {
		return false
	}

	sess, err := c.srv.engine.NewSession(c.ctx, params)
	if err != nil {
		e := sqlerr.From(err)
		c.log.Info("pgwire: session refused", "err", err)
		c.sendFatal(e)
		return false
	}
	if c.srv.reservedFull(sess) {
		sess.Close()
		c.log.Info("pgwire: session refused: the remaining slots are reserved for superusers", "user", params["user"])
		c.sendFatal(sqlerr.New(sqlerr.TooManyConnections, "remaining connection slots are reserved for non-replication superuser connections"))
		return false
	}
	c.sess = sess
	c.srv.register(c)
	c.startBackend()
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

// Admission decides how a client at addr, over TLS or not, may log in:
// with a SCRAM exchange, trusted (no password is set and it is on
// loopback), or not at all (the returned error, 28000). A cluster member
// that forwards sessions applies it to the client's own address, which
// the coordinator does not see (Forwarder).
func (s Security) Admission(addr net.Addr, overTLS bool) (scram bool, refusal *sqlerr.Error) {
	local := isLocal(addr)
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if s.RequireTLSRemote && !local && !overTLS {
		return false, &sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpecification,
			Message: fmt.Sprintf("connection from host %q must use TLS: ssl_require_remote is on and only loopback connections may be unencrypted", host),
			Hint:    "Connect with sslmode=require or sslmode=verify-full."}
	}
	if s.Auth != nil {
		return true, nil
	}
	if !local {
		return false, &sqlerr.Error{Code: sqlerr.InvalidAuthorizationSpecification,
			Message: fmt.Sprintf("connection from host %q refused: no password is set, so only loopback connections are accepted", host),
			Hint:    "Start the server with STREAMDB_PASSWORD or --password-file to accept remote connections (user \"streamdb\"), or connect from the server's host."}
	}
	return false, nil
}

// authenticate runs SCRAM-SHA-256 (with channel binding, SCRAM-SHA-256-PLUS,
// offered over TLS) for user. A wrong password and an unknown user both end
// in FATAL 28P01 after a full exchange, so a client cannot tell them apart.
func (c *conn) authenticate(user string) bool {
	v, err := c.srv.sec.Auth.SCRAMVerifier(c.ctx, user)
	if err != nil {
		c.sendFatal(sqlerr.From(err))
		return false
	}
	x := &scramExchange{v: v}
	if v == nil {
		x.v, x.mock = mockVerifier(c.srv.mockSecret, user), true
	}
	if c.tls != nil {
		x.cbData = c.srv.cbData
	}
	// Authentication messages are small; PostgreSQL caps them at 64 KiB.
	c.be.SetMaxBodyLen(maxAuthMessageSize)
	defer c.be.SetMaxBodyLen(maxMessageSize)

	c.w.send(&pgproto3.AuthenticationSASL{AuthMechanisms: x.mechanisms()})
	if c.w.flush() != nil {
		return false
	}
	c.be.SetAuthType(pgproto3.AuthTypeSASL)
	msg, err := c.be.Receive()
	if err != nil {
		c.readFailed(err)
		return false
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "expected SASL response, got message type %T", msg))
		return false
	}
	serverFirst, serr := x.clientFirst(first.AuthMechanism, first.Data)
	if serr != nil {
		c.log.Info("pgwire: SCRAM exchange failed", "user", user, "err", serr.Message)
		c.sendFatal(serr)
		return false
	}
	c.w.send(&pgproto3.AuthenticationSASLContinue{Data: serverFirst})
	if c.w.flush() != nil {
		return false
	}
	c.be.SetAuthType(pgproto3.AuthTypeSASLContinue)
	msg, err = c.be.Receive()
	if err != nil {
		c.readFailed(err)
		return false
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		c.sendFatal(sqlerr.New(sqlerr.ProtocolViolation, "expected SASL response, got message type %T", msg))
		return false
	}
	serverFinal, err := x.clientFinal(final.Data)
	c.be.SetAuthType(pgproto3.AuthTypeOk)
	if errors.Is(err, errPasswordFailed) {
		c.log.Warn("pgwire: password authentication failed", "user", user, "unknown_user", x.mock)
		c.sendFatal(&sqlerr.Error{Code: sqlerr.InvalidPassword, Message: fmt.Sprintf("password authentication failed for user %q", user)})
		return false
	}
	if err != nil {
		c.log.Info("pgwire: SCRAM exchange failed", "user", user, "err", err)
		c.sendFatal(sqlerr.From(err))
		return false
	}
	c.w.send(&pgproto3.AuthenticationSASLFinal{Data: serverFinal})
	c.log.Debug("pgwire: authenticated", "user", user, "channel_binding", x.plus)
	return true
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
