package node

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"streamdb/config"
	"streamdb/sqlerr"
)

// TestChangeSettingRefusals checks the changes ChangeSetting refuses
// before anything runs, with their SQLSTATE, and that ALTER SYSTEM of a
// setting read only at start is saved in the auto file and not applied.
func TestChangeSettingRefusals(t *testing.T) {
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	n := &Node{cfg: cfg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, tc := range []struct {
		c    SettingChange
		code string
	}{
		{SettingChange{Key: config.StateBackend, Value: "memory"}, sqlerr.CantChangeRuntimeParam},
		{SettingChange{Key: config.StateCheckpointsDir, Value: "/elsewhere", System: true}, sqlerr.CantChangeRuntimeParam},
		{SettingChange{Key: config.StateBackend, Value: "paper", System: true}, sqlerr.InvalidParameterValue},
	} {
		err := n.ChangeSetting(tc.c)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Errorf("%+v: got %v, want SQLSTATE %s", tc.c, err, tc.code)
		}
	}
	if _, err := os.Stat(cfg.AutoFile()); !os.IsNotExist(err) {
		t.Fatalf("a refused change wrote %s (%v)", cfg.AutoFile(), err)
	}
	if err := n.ChangeSetting(SettingChange{Key: config.StateBackend, Value: "memory", System: true}); err != nil {
		t.Fatal(err)
	}
	if got := n.Setting(config.StateBackend); got == "memory" {
		t.Errorf("ALTER SYSTEM of %s applied before a restart", config.StateBackend)
	}
	data, err := os.ReadFile(cfg.AutoFile())
	if err != nil || !strings.Contains(string(data), config.StateBackend+": memory") {
		t.Errorf("auto file holds %q (%v), want %s: memory", data, err, config.StateBackend)
	}
}
