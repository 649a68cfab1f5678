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

// skipForwardMark drops the mark when the connection starts with one and
// notes the connection as relayed by a member. What it reads besides the
// mark is handed back to the Backend whole, in one read as it came, so
// that the SSLRequest check still counts bytes sent after the request.
func (c *conn) skipForwardMark() bool {
	buf := make([]byte, 8192)
	n := 0
	for n < len(forwardMark) {
		m, err := c.nc.Read(buf[n:])
		n += m
		if err != nil {
			if n == 0 {
				c.readFailed(err)
				return false
			}
			break // the Backend reads the error again after these bytes
		}
		if n >= 4 && binary.BigEndian.Uint32(buf[:4]) != uint32(len(forwardMark)) {
			break // a packet of another length: not the mark
		}
	}
	rest := buf[:n]
	if isForwardMark(buf[:min(n, len(forwardMark))]) {
		rest = buf[len(forwardMark):n]
		c.log = c.log.With("forwarded_by_member", true)
	}
	if len(rest) > 0 {
		c.inBytes.r = io.MultiReader(bytes.NewReader(rest), c.nc)
	}
	return true
}
