package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"streamdb/tests/testutil"
)

// TestListenHint checks that LISTEN, which psql users reach for to follow
// changes, is refused with a hint naming SUBSCRIBE.
func TestListenHint(t *testing.T) {
	srv := startServer(t)
	conn := srv.Conn(t)
	_, err := conn.Exec(testutil.Context(t, time.Minute), "LISTEN orders", pgx.QueryExecModeSimpleProtocol)
	pe := testutil.WantCode(t, err, "0A000", "LISTEN")
	if !strings.Contains(pe.Hint, "SUBSCRIBE") {
		t.Errorf("LISTEN: hint %q does not name SUBSCRIBE", pe.Hint)
	}
}
