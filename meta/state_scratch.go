package meta

import "streamdb/storage"

// Scratch space on disk under the state store's directory, for the
// frontend's work that outgrows memory: a transaction block's spilled
// changes and the keys a bulk load has seen. Neither is state: nothing
// in it outlives the process, and a checkpoint never holds it.

// Scratch is a private store a transaction block spills its changes to.
type Scratch = storage.Scratch

// KeySets are sets of keys a bulk load checks its rows' unique keys in.
type KeySets = storage.KeySets

// OpenScratch opens an empty scratch store; Close removes it.
func (s *State) OpenScratch() (*Scratch, error) { return s.store.OpenScratch() }

// NewKeySets returns n empty key sets, numbered from 0; Close removes
// them.
func (s *State) NewKeySets(n int) *KeySets { return s.store.NewKeySets(n) }
