package exec

import (
	"fmt"
	"testing"
)

// Every evicted key must be read back from Pebble; other keys of a table
// that was empty at start need no read, but for rare false positives.
func TestMissRuleRemembersEvictedKeys(t *testing.T) {
	var m missRule
	const evicted = 300_000 // spans several filters
	for i := range evicted {
		m.evictedKey(fmt.Sprintf("k%d", i))
	}
	for i := range evicted {
		if k := fmt.Sprintf("k%d", i); !m.mustRead(k) {
			t.Fatalf("evicted key %q is not read back", k)
		}
	}
	const probes = 200_000
	falsePositives := 0
	for i := range probes {
		if m.mustRead(fmt.Sprintf("new%d", i)) {
			falsePositives++
		}
	}
	if falsePositives > probes/100 {
		t.Errorf("%d of %d new keys would be read from Pebble", falsePositives, probes)
	}
	if len(m.evicted.filters) < 2 {
		t.Errorf("%d filters for %d keys: the set did not grow", len(m.evicted.filters), evicted)
	}

	held := missRule{storeMayHold: true}
	if !held.mustRead("anything") {
		t.Error("a table that held rows at start must be read on every miss")
	}
	var fresh missRule
	if fresh.mustRead("k1") {
		t.Error("a miss with nothing evicted and an empty table at start needs no read")
	}
}
