package pgwire

import (
	"bytes"
	"encoding/binary"
	"io"
)

// forwardMarkCode is the request code of the packet a cluster member sends
// first on every connection it relays to its coordinator (a startup-style
// packet: length 8, then this code, in the range PostgreSQL keeps for
// such requests: 1234.5678 is CancelRequest, 1234.5679 SSLRequest). The
// coordinator skips it; a server that is not the coordinator refuses the
// connection instead of forwarding it again, so a session crosses at most
// one member and two members that each believe the other leads cannot
// relay a connection in a loop. The mark grants nothing: the coordinator
// authenticates the client behind it as any other.
const forwardMarkCode = 1234<<16 | 5699

// forwardMark is the mark as sent.
var forwardMark = func() []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint32(b[0:4], 8)
	binary.BigEndian.PutUint32(b[4:8], forwardMarkCode)
	return b
}()

// isForwardMark reports whether a startup packet (length included) is the
// mark.
func isForwardMark(pkt []byte) bool { return bytes.Equal(pkt, forwardMark) }

// skipForwardMark reads the connection's first 8 bytes (every startup
// packet has at least that many): the mark is dropped and the connection
// noted as relayed by a member; anything else is handed back to the
// Backend unread, so that the SSLRequest check still counts it.
func (c *conn) skipForwardMark() bool {
	head := make([]byte, 8)
	if _, err := io.ReadFull(c.nc, head); err != nil {
		c.readFailed(err)
		return false
	}
	if isForwardMark(head) {
		c.log = c.log.With("forwarded_by_member", true)
		return true
	}
	c.inBytes.r = io.MultiReader(bytes.NewReader(head), c.nc)
	return true
}
