package config

import (
	"slices"
	"testing"
)

func TestKeysAreSettings(t *testing.T) {
	var settings []string
	for _, s := range Settings {
		settings = append(settings, s.Key)
	}
	for _, k := range keys {
		if !slices.Contains(settings, k) {
			t.Errorf("key %q is not in Settings", k)
		}
	}
	for _, k := range settings {
		if !slices.Contains(keys, k) {
			t.Errorf("setting %q has no key constant", k)
		}
	}
}
