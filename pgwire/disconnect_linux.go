package pgwire

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// peerClosed reports whether the peer of the socket hung up or the socket
// failed. POLLRDHUP sees the hang-up even when unread data precedes it.
func peerClosed(raw syscall.RawConn) bool {
	closed := false
	raw.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		closed = err == nil && n > 0 && fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
	})
	return closed
}
