package sql

import "streamdb/meta"

// The WITH options that choose what JetStream keeps of a table or stream
// are meta's (meta/retention.go); CREATE and ALTER check them there.
const (
	optHistory   = meta.OptHistory
	optRetention = meta.OptRetention
)

func checkRetentionOptions(opts map[string]string, isTable bool) error {
	return meta.CheckRetentionOptions(opts, isTable)
}
