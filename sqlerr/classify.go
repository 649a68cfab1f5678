package sqlerr

import "sync"

// Errors that come from below SQL (NATS, the disk) get their SQLSTATE
// from the package that knows them: it registers a classifier at init,
// and From asks each in turn. So a NATS failure or a full disk met
// anywhere (an INSERT, a DDL statement, FLUSH) reaches the client with
// its class (08, 53, 58) and not as XX000.

var (
	classifiersMu sync.RWMutex
	classifiers   []func(error) *Error
)

// Classify registers fn, which returns the *Error that err stands for, or
// nil when it does not know err. Call it from an init function.
func Classify(fn func(error) *Error) {
	classifiersMu.Lock()
	defer classifiersMu.Unlock()
	classifiers = append(classifiers, fn)
}

func classify(err error) *Error {
	classifiersMu.RLock()
	defer classifiersMu.RUnlock()
	for _, fn := range classifiers {
		if e := fn(err); e != nil {
			return e
		}
	}
	return nil
}
