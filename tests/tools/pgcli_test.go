package tools

import (
	"testing"
	"time"
)

// TestPgcliCompletionLikePostgres runs the catalog queries of pgcli's
// completion (testdata/pgcli: tables, views, materialized views, columns
// with defaults, foreign keys, data types) against streamdb and against
// PostgreSQL 15 and compares what they return.
func TestPgcliCompletionLikePostgres(t *testing.T) {
	runLikePostgres(t, "pgcli", "pgcli", 2*time.Minute)
}
