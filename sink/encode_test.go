package sink

import (
	"encoding/json"
	"strings"
	"testing"

	"streamdb/exec"
	"streamdb/types"
)

// TestChangelogMessages: changes split into messages of at most
// changelogRows changes and changelogBytes bytes, each a JSON array, in
// order.
func TestChangelogMessages(t *testing.T) {
	cols := []types.Column{{Name: "k", Type: types.Int8}, {Name: "s", Type: types.Text}}
	var changes []exec.Change
	for i := range 2500 {
		changes = append(changes, exec.Change{Row: types.Row{types.NewInt(int64(i)), types.NewString("x")}, Sign: 1})
	}
	msgs, err := changelogMessages(cols, changes)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 3 {
		t.Fatalf("2500 small changes: %d messages, want 3", len(msgs))
	}
	total := 0
	for _, m := range msgs {
		var arr []map[string]any
		if err := json.Unmarshal(m, &arr); err != nil {
			t.Fatalf("%s: %v", m[:40], err)
		}
		if int(arr[0]["row"].(map[string]any)["k"].(float64)) != total {
			t.Fatalf("messages out of order at change %d", total)
		}
		total += len(arr)
	}
	if total != 2500 {
		t.Fatalf("%d changes in the messages, want 2500", total)
	}
	big := strings.Repeat("y", 200<<10)
	changes = changes[:0]
	for i := range 5 {
		changes = append(changes, exec.Change{Row: types.Row{types.NewInt(int64(i)), types.NewString(big)}, Sign: -1})
	}
	if msgs, err = changelogMessages(cols, changes); err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if len(m) > changelogBytes {
			t.Fatalf("a message of %d bytes, over %d", len(m), changelogBytes)
		}
	}
	if len(msgs) != 3 {
		t.Fatalf("5 changes of 200 KiB: %d messages, want 3 (two per message)", len(msgs))
	}
}
