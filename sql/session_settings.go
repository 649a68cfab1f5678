package sql

import "maps"

// Session parameters follow PostgreSQL's rules for when a value ends:
//
//   - RESET name, RESET ALL and DISCARD ALL go back to the session's reset
//     value: the default, or what the client's startup packet gave
//     (application_name), not the server's default;
//   - SET LOCAL lasts until the end of the transaction block; SET inside a
//     block lasts beyond COMMIT but is undone by ROLLBACK. Outside a block
//     SET LOCAL changes nothing that outlives the statement (PostgreSQL
//     warns and ignores it).
//
// ROLLBACK TO SAVEPOINT leaves settings as they are (PostgreSQL undoes the
// SETs made after the savepoint; streamdb does not track them per
// savepoint).

// startupSettings are the session parameters a client may set in its
// startup packet; they become the session's reset values.
var startupSettings = []string{"application_name"}

// newResetValues are a new session's reset values: the defaults with the
// startup packet's parameters on top.
func newResetValues(startup map[string]string) map[string]string {
	r := maps.Clone(defaultSessionSettings)
	for _, k := range startupSettings {
		if v := startup[k]; v != "" {
			r[k] = v
		}
	}
	return r
}

// resetValue is the value RESET name returns the parameter to.
func (s *session) resetValue(name string) string {
	if v, ok := s.resetValues[name]; ok {
		return v
	}
	return defaultSessionSettings[name]
}

// resetAllSettings is RESET ALL (and part of DISCARD ALL): every session
// parameter back to its reset value; custom parameters (with a dot) end.
func (s *session) resetAllSettings() {
	for k := range s.settings {
		if _, ok := s.resetValues[k]; !ok {
			delete(s.settings, k)
		}
	}
	for k, v := range s.resetValues {
		s.setSetting(k, v, false)
	}
}

// settingUndo remembers, for one parameter changed inside a transaction
// block, the value before the block (restored by ROLLBACK) and the value
// the block's plain SETs left (restored at COMMIT when a SET LOCAL came
// after them).
type settingUndo struct {
	before, session string
	hadBefore       bool
	// set: a plain SET ran in the block (session holds its value);
	// local: a SET LOCAL ran after the last plain SET.
	set, local bool
}

// setSetting changes a session parameter, keeping what the transaction
// block needs to undo it. local is SET LOCAL (or set_config(..., true)).
func (s *session) setSetting(name, value string, local bool) {
	if s.tx == nil {
		if !local {
			s.settings[name] = value
		}
		return
	}
	if s.tx.settings == nil {
		s.tx.settings = map[string]*settingUndo{}
	}
	u := s.tx.settings[name]
	if u == nil {
		old, had := s.settings[name]
		u = &settingUndo{before: old, hadBefore: had}
		s.tx.settings[name] = u
	}
	if local {
		u.local = true
	} else {
		u.session, u.set, u.local = value, true, false
	}
	s.settings[name] = value
}

// endTxSettings ends the block's SETs: after COMMIT the plain SETs stay
// and the SET LOCALs go; after ROLLBACK all go.
func (s *session) endTxSettings(tx *txn, committed bool) {
	for name, u := range tx.settings {
		switch {
		case committed && !u.local:
		case committed && u.set:
			s.settings[name] = u.session
		case u.hadBefore:
			s.settings[name] = u.before
		default:
			delete(s.settings, name)
		}
	}
	tx.settings = nil
}
