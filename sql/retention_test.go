package sql

import (
	"testing"
	"time"

	"streamdb/checkpoint"
	"streamdb/exec"
)

func TestPurgeFloor(t *testing.T) {
	tgt := purgeTarget{subject: "s", objects: []string{"ev"}}
	live := []exec.ViewPosition{{Subject: "s", Seq: 90}, {Subject: "other", Seq: 5}, {Subject: "s", Seq: 70}}
	retained := []checkpoint.Position{{Subject: "s", Seq: 60}, {Subject: "other", Seq: 1}}
	cases := []struct {
		name     string
		live     []exec.ViewPosition
		stopped  []storedPosition
		retained []checkpoint.Position
		floor    uint64
		ok       bool
	}{
		{"nothing reads the subject", nil, nil, nil, 0, false},
		{"only other subjects", live[1:2], nil, retained[1:], 0, false},
		{"lowest running view", live, nil, nil, 70, true},
		{"a retained checkpoint below the views", live, nil, retained, 60, true},
		{"a stopped view below everything", live, []storedPosition{{stream: "ev", seq: 10}, {stream: "x", seq: 1}}, retained, 10, true},
		{"a stopped view whose sources are unknown", live, []storedPosition{{stream: "", seq: 0}}, retained, 0, true},
		{"an old checkpoint without subjects, by stream name", live, nil, []checkpoint.Position{{Stream: "ev", Seq: 3}, {Stream: "x", Seq: 1}}, 3, true},
	}
	for _, c := range cases {
		floor, ok := purgeFloor(tgt, c.live, c.stopped, c.retained)
		if floor != c.floor || ok != c.ok {
			t.Errorf("%s: got %d %v, want %d %v", c.name, floor, ok, c.floor, c.ok)
		}
	}
}

func TestParseHistory(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"7 days":         7 * 24 * time.Hour,
		"12 hours":       12 * time.Hour,
		"1 day -1 hour":  23 * time.Hour,
		"1 month":        30 * 24 * time.Hour,
		"0":              0,
		"90 seconds":     90 * time.Second,
		"P1DT2H":         26 * time.Hour,
		"1 mon 1 minute": 30*24*time.Hour + time.Minute,
	} {
		got, err := parseHistory(in)
		if err != nil || got != want {
			t.Errorf("parseHistory(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"soon", "-1 day", "1 hour -2 hours", "1000 years", "2147483647 days"} {
		if _, err := parseHistory(in); err == nil {
			t.Errorf("parseHistory(%q) accepted", in)
		}
	}
}

func TestCheckRetentionOptions(t *testing.T) {
	opts := map[string]string{"retention": " Consumed "}
	if err := checkRetentionOptions(opts, false); err != nil || opts["retention"] != "consumed" {
		t.Errorf("stream retention: %v, %q", err, opts["retention"])
	}
	for _, c := range []struct {
		opts    map[string]string
		isTable bool
	}{
		{map[string]string{"retention": "consumed"}, true},
		{map[string]string{"history": "1 day"}, false},
		{map[string]string{"retention": "forever"}, false},
		{map[string]string{"history": "often"}, true},
	} {
		if err := checkRetentionOptions(c.opts, c.isTable); err == nil {
			t.Errorf("%v (table %v) accepted", c.opts, c.isTable)
		}
	}
}
