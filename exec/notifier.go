package exec

import "sync/atomic"

// notifier wakes every goroutine waiting for a condition to change: a
// waiter takes wait() before it checks the condition, then blocks on the
// channel, so a change made after the check is never missed. Its zero
// value is not ready: use newNotifier.
type notifier struct {
	ch atomic.Pointer[chan struct{}]
}

func newNotifier() *notifier {
	n := &notifier{}
	ch := make(chan struct{})
	n.ch.Store(&ch)
	return n
}

// wait returns a channel closed at the next notify.
func (n *notifier) wait() <-chan struct{} { return *n.ch.Load() }

// notify closes the current channel, waking its waiters, and replaces it.
func (n *notifier) notify() {
	next := make(chan struct{})
	close(*n.ch.Swap(&next))
}
