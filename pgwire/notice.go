package pgwire

import (
	"context"

	"github.com/jackc/pgx/v5/pgproto3"
)

// noticeKey carries, in a statement's context, the connection running it.
type noticeKey struct{}

// withNotices lets the engine send NOTICEs to c while a statement runs.
func (c *conn) withNotices(ctx context.Context) context.Context {
	return context.WithValue(ctx, noticeKey{}, c)
}

// Notice sends a NOTICE (SQLSTATE 00000) to the client whose statement
// runs under ctx, at once, while the statement goes on (psql prints it,
// drivers hand it to their notice handlers). It must be called from the
// goroutine that runs the statement, which owns the connection's writer;
// with a context that no statement of this package runs under it does
// nothing.
func Notice(ctx context.Context, message, detail string) {
	c, ok := ctx.Value(noticeKey{}).(*conn)
	if !ok {
		return
	}
	c.w.send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: "00000", Message: message, Detail: detail})
	c.w.flush()
}

// Warning sends a WARNING (SQLSTATE 01000) the way Notice sends a NOTICE:
// for what the client should not miss, which psql prints even under
// client_min_messages = warning.
func Warning(ctx context.Context, message, detail, hint string) {
	c, ok := ctx.Value(noticeKey{}).(*conn)
	if !ok {
		return
	}
	c.w.send(&pgproto3.NoticeResponse{Severity: "WARNING", SeverityUnlocalized: "WARNING", Code: "01000", Message: message, Detail: detail, Hint: hint})
	c.w.flush()
}

// NoticeCode sends a NOTICE with SQLSTATE code, as Notice does.
func NoticeCode(ctx context.Context, code, message string) {
	c, ok := ctx.Value(noticeKey{}).(*conn)
	if !ok {
		return
	}
	c.w.send(&pgproto3.NoticeResponse{Severity: "NOTICE", SeverityUnlocalized: "NOTICE", Code: code, Message: message})
	c.w.flush()
}
