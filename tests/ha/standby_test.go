package ha

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"streamdb/tests/testutil"
)

// The first server of a group is active, the second a standby that
// refuses sessions naming it; a client listing both hosts, in either
// order, reaches the active one. Paused past its lease (SIGSTOP), the
// active server loses the group to the standby; resumed (SIGCONT), it
// finds its lease taken and restarts itself as a standby naming the new
// active server.
func TestStandbyRefusesAndPausedActiveStepsDown(t *testing.T) {
	url := testutil.StartNATS(t)
	a := startMember(t, url, "g")
	b := startMember(t, url, "g")
	if msg, err := refusal(b); err != nil || !strings.Contains(msg, a.Addr) {
		t.Fatalf("standby b: %q, %v; want a refusal naming %s", msg, err, a.Addr)
	}
	for _, order := range [][]*testutil.Server{{a, b}, {b, a}} {
		conn := connectGroup(t, 10*time.Second, order...)
		if got := activeAddr(conn); got != a.Addr {
			t.Fatalf("a client listing %s,%s reached %s; want the active %s", order[0].Addr, order[1].Addr, got, a.Addr)
		}
	}

	a.Signal(t, syscall.SIGSTOP)
	conn := connectGroup(t, 30*time.Second, a, b)
	if got := activeAddr(conn); got != b.Addr {
		t.Fatalf("after a stalled, the group's session is on %s; want %s", got, b.Addr)
	}
	a.Signal(t, syscall.SIGCONT)
	testutil.Poll(t, 30*time.Second, "a to step down and name b", func() error {
		msg, err := refusal(a)
		if err != nil {
			return err
		}
		if !strings.Contains(msg, b.Addr) {
			return errors.New(msg)
		}
		return nil
	})
	if !strings.Contains(a.Logs(), "stepping down to standby") {
		t.Fatal("a's log does not say it stepped down")
	}
}
