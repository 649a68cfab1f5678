//go:build !linux

package pgwire

import "syscall"

// peerClosed cannot tell without reading on this platform: a hang-up is
// noticed when the connection next reads or writes.
func peerClosed(syscall.RawConn) bool { return false }
