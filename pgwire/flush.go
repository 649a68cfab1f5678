package pgwire

import "context"

// Flush sends what the statement running under ctx has written so far to
// its client at once, instead of when the write buffer fills or the
// statement ends: a statement that streams without end (SUBSCRIBE) calls
// it after each batch. It must be called from the goroutine that runs the
// statement; with a context no statement of this package runs under it
// does nothing.
func Flush(ctx context.Context) error {
	c, ok := ctx.Value(noticeKey{}).(*conn)
	if !ok {
		return nil
	}
	return c.w.flush()
}
