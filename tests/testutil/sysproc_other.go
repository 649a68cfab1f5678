//go:build !linux

package testutil

import "syscall"

// sysProcAttr returns nil where Pdeathsig does not exist.
func sysProcAttr() *syscall.SysProcAttr { return nil }
