package ha

import (
	"errors"
	"fmt"
	"io"
	"net/http"
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
	a := startActive(t, url, "g", nil)
	b := startMember(t, url, "g")
	// b refuses without a name while it cannot read the lease.
	testutil.Poll(t, 60*time.Second, "standby b to refuse naming "+a.Addr, func() error {
		msg, err := refusal(b)
		if err == nil && !strings.Contains(msg, a.Addr) {
			err = errors.New(msg)
		}
		return err
	})
	for _, order := range [][]*testutil.Server{{a, b}, {b, a}} {
		conn := connectGroup(t, 60*time.Second, order...)
		if got := activeAddr(conn); got != a.Addr {
			t.Fatalf("a client listing %s,%s reached %s; want the active %s", order[0].Addr, order[1].Addr, got, a.Addr)
		}
	}

	a.Signal(t, syscall.SIGSTOP)
	conn := connectGroup(t, 60*time.Second, a, b)
	if got := activeAddr(conn); got != b.Addr {
		t.Fatalf("after a stalled, the group's session is on %s; want %s", got, b.Addr)
	}
	a.Signal(t, syscall.SIGCONT)
	testutil.Poll(t, 60*time.Second, "a to step down and name b", func() error {
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

// A standby's /readyz answers 503 naming the active server (a load
// balancer sends no queries to it), while /healthz says it is alive; the
// active server is ready.
func TestStandbyNotReady(t *testing.T) {
	url := testutil.StartNATS(t)
	a := startActive(t, url, "ready", nil)
	b := startMember(t, url, "ready")
	get := func(s *testutil.Server, path string) (int, string, error) {
		resp, err := http.Get(s.HTTPURL() + path)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	testutil.Poll(t, 30*time.Second, "the active server to be ready", func() error {
		code, body, err := get(a, "/readyz")
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("active /readyz: %d %s", code, body)
		}
		return err
	})
	testutil.Poll(t, 30*time.Second, "standby /readyz to answer 503 naming "+a.Addr, func() error {
		code, body, err := get(b, "/readyz")
		if err == nil && (code != http.StatusServiceUnavailable || !strings.Contains(body, "standby") || !strings.Contains(body, a.Addr)) {
			err = fmt.Errorf("standby /readyz: %d %q", code, body)
		}
		return err
	})
	if code, body, err := get(b, "/healthz"); err != nil || code != http.StatusOK {
		t.Fatalf("standby /healthz: %d %q, %v; want 200", code, body, err)
	}
}
