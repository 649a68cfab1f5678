// Package sink publishes the outboxes of sinks (CREATE SINK) to their
// NATS subjects, exactly once.
//
// A view's pipeline writes each epoch's changes to the outbox of each of
// its sinks in the epoch's own Pebble batch (exec/sink_outbox.go). The
// Publisher publishes an entry only once a checkpoint holds its epoch, so
// that no recovery can take back what a consumer has seen; it publishes
// entries in key order, each message with a Nats-Msg-Id that names the
// sink, the entry and the message's index in it, and deletes an entry once
// JetStream acknowledged all of its messages. On start it reads the last
// message on the sink's subject back from JetStream, and the messages of
// that entry before it, and resumes with the entry's missing messages
// (a failed message followed by stored ones, then a crash) and then the
// entries after it, so that neither a crash between publishing and
// deleting nor a checkpoint restored with entries already published sends
// a message twice or leaves one out, whatever JetStream's deduplication
// window.
package sink

import (
	"fmt"
	"strconv"
	"strings"
)

// EpochHeader carries the epoch of a message's changes.
const EpochHeader = "Streamdb-Epoch"

// position is a message of a sink: outbox entry (epoch, part), message
// index in it.
type position struct {
	epoch uint64
	part  byte
	index int
}

// after reports whether p is in an entry after (epoch, part).
func (p position) after(epoch uint64, part byte) bool {
	return p.epoch > epoch || p.epoch == epoch && p.part > part
}

// msgID is the Nats-Msg-Id of message index of entry (epoch, part) of the
// sink with uid: uid/epoch/part/index.
func msgID(uid string, epoch uint64, part byte, index int) string {
	return fmt.Sprintf("%s/%d/%d/%d", uid, epoch, part, index)
}

// parseMsgID reads a msgID; ok is false when id is not one of uid's.
func parseMsgID(uid, id string) (position, bool) {
	rest, found := strings.CutPrefix(id, uid+"/")
	if !found {
		return position{}, false
	}
	f := strings.Split(rest, "/")
	if len(f) != 3 {
		return position{}, false
	}
	e, err1 := strconv.ParseUint(f[0], 10, 64)
	part, err2 := strconv.ParseUint(f[1], 10, 8)
	idx, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || idx < 0 {
		return position{}, false
	}
	return position{epoch: e, part: byte(part), index: idx}, true
}
