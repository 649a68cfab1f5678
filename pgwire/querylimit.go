package pgwire

import "streamdb/sqlerr"

const (
	// DefaultMaxQueryLength is the longest statement text a client may
	// send unless SetMaxQueryLength says otherwise.
	DefaultMaxQueryLength = 16 << 20
	// protocolMaxMessage is PostgreSQL's own bound on a frontend message,
	// which applies when max_query_length is 0.
	protocolMaxMessage = 1 << 30
)

// SetMaxQueryLength bounds the text of one Query or Parse message in
// bytes (0: only the protocol's 1 GB). A longer statement is refused with
// 54001 and the session goes on; messages longer than the bound by more
// than a margin end the connection, since their bodies are not read.
func (s *Server) SetMaxQueryLength(n int) { s.maxQueryLength.Store(int64(n)) }

// maxBodyLen is the largest frontend message a connection reads: room for
// the longest allowed statement with its parameters, and never less than
// maxMessageSize, so that Bind can carry large values.
func (s *Server) maxBodyLen() int {
	n := int(s.maxQueryLength.Load())
	if n <= 0 {
		return protocolMaxMessage
	}
	return min(max(maxMessageSize, n+n/4), protocolMaxMessage)
}

// checkQueryLength refuses statement text longer than max_query_length.
func (c *conn) checkQueryLength(sql string) error {
	limit := c.srv.maxQueryLength.Load()
	if limit <= 0 || int64(len(sql)) <= limit {
		return nil
	}
	return sqlerr.New(sqlerr.StatementTooComplex, "statement is too long: %d bytes, more than max_query_length (%d bytes)", len(sql), limit).
		WithHint("Send it in smaller statements (many rows as several INSERTs), or raise max_query_length in the server's configuration and restart it.")
}
