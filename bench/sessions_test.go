package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// sessionLoad opens sessions connections to dsn (each running setup, if
// any), then has each run sql one statement after another for dur, with
// the arguments args(w, i) gives its i-th statement. It returns
// statements per second, how many failed and the last error.
func sessionLoad(b *testing.B, dsn, setup string, sessions int, dur time.Duration, sql string, args func(w int, i int64) []any) (float64, int64, error) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	conns := make([]*pgx.Conn, sessions)
	for i := range conns {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close(context.Background())
		if setup != "" {
			if _, err := c.Exec(ctx, setup); err != nil {
				b.Fatalf("%s: %v", setup, err)
			}
		}
		conns[i] = c
	}
	var (
		done, failed atomic.Int64
		lastErr      atomic.Value
		wg           sync.WaitGroup
	)
	deadline := time.Now().Add(dur)
	start := time.Now()
	for w, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); time.Now().Before(deadline); i++ {
				if _, err := c.Exec(ctx, sql, args(w, i)...); err != nil {
					failed.Add(1)
					lastErr.Store(err)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	rate := float64(done.Load()) / time.Since(start).Seconds()
	err, _ := lastErr.Load().(error)
	return rate, failed.Load(), err
}
