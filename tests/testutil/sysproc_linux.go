package testutil

import "syscall"

// sysProcAttr makes the child die with the test process, so that a test
// binary killed by a timeout leaves no server behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
