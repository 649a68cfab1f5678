package sql

import "streamdb/meta"

// checkFence refuses a write once this server no longer holds its group's
// lease (node.Fence): the engine checks it before every table or stream
// write is published.
func (e *Engine) checkFence() error {
	if err := e.host.CheckFence(); err != nil {
		return fencedError()
	}
	return nil
}

func fencedError() error { return meta.FencedError() }
