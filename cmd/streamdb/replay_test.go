package main

import (
	"strings"
	"testing"
)

func TestReplayFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		wantErr string
	}{
		{args: nil},
		{args: []string{"--replay-control", "c1", "--nats-url", "nats://x:4222"}},
		{args: []string{"--replay-control", "c1", "--nats-url", "nats://x:4222", "--replay-until-epoch", "42"}},
		{args: []string{"--replay-control", "c1"}, wantErr: "--replay-control needs --nats-url"},
		{args: []string{"--replay-until-epoch", "42"}, wantErr: "--replay-until-epoch needs --replay-control"},
		{args: []string{"--replay-control", "a b", "--nats-url", "nats://x:4222"}, wantErr: "use 1 to 48 letters"},
		{args: []string{"--replay-control", "c1", "--nats-url", "nats://x:4222", "--cluster", "c2"}, wantErr: "cannot be combined with --cluster"},
		{args: []string{"--replay-control", "c1", "--nats-url", "nats://x:4222", "--ha-group", "g"}, wantErr: "cannot be combined with --cluster or --ha-group"},
	} {
		args := append([]string{"--data-dir", t.TempDir()}, c.args...)
		cfg, hf, err := parseFlags(args)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if err := clusterFlags(cfg, &hf); err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		err = replayFlags(cfg, hf)
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%q: %v", c.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%q: error %v, want one saying %q", c.args, err, c.wantErr)
		}
	}
}
