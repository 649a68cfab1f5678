package sql

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"streamdb/catalog"
	"streamdb/config"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
	"streamdb/types"
)

// defaultSessionSettings are the session parameters drivers read or set.
var defaultSessionSettings = map[string]string{
	"server_version":                      "15.0",
	"server_encoding":                     "UTF8",
	"client_encoding":                     "UTF8",
	"datestyle":                           "ISO, MDY",
	"timezone":                            "UTC",
	"intervalstyle":                       "postgres",
	"integer_datetimes":                   "on",
	"standard_conforming_strings":         "on",
	"application_name":                    "",
	"extra_float_digits":                  "1",
	"search_path":                         "public",
	"transaction_isolation":               "serializable",
	"max_identifier_length":               "63",
	"statement_timeout":                   "0",
	"idle_in_transaction_session_timeout": "0",
	// read_your_writes: a SELECT waits until every view and table it
	// reads holds this session's earlier writes (off: read the newest
	// committed epoch at once).
	"read_your_writes": "on",
	// query_max_memory bounds the rows an ad-hoc query builds in memory
	// (53200 past it); PostgreSQL's units (kB, MB, GB), 0 for no bound.
	"query_max_memory": "1GB",
	// transaction_spill_memory is what a transaction block keeps of its
	// changes to tables in memory before it spills them to disk
	// (block_spill.go); PostgreSQL's units, 0 to keep them all in memory.
	"transaction_spill_memory": defaultTransactionSpillMemory,
}

func textCols(names ...string) []types.Column {
	cols := make([]types.Column, len(names))
	for i, n := range names {
		cols[i] = types.Column{Name: n, Type: types.Text}
	}
	return cols
}

func textRow(vals ...string) types.Row {
	row := make(types.Row, len(vals))
	for i, v := range vals {
		row[i] = types.NewString(v)
	}
	return row
}

func (s *session) prepareShow(n *front.Show) (*prepared, error) {
	switch n.Target {
	case "sources":
		return showResult(meta.PGSourceColumns, func(context.Context) ([]types.Row, error) { return s.e.pgSources.Rows(), nil }), nil
	case "streams":
		return showResult(streamColumns[:showStreamsColumns], func(context.Context) ([]types.Row, error) {
			rows := s.e.streamRows()
			for i := range rows {
				rows[i] = rows[i][:showStreamsColumns]
			}
			return rows, nil
		}), nil
	case "sinks":
		return showResult(meta.SinkColumns, s.e.showSinks), nil
	case "materialized views", "views":
		// node: the server the view runs on (in this step of scale-out,
		// every view runs on the cluster's coordinator, this server).
		return showResult(textCols("name", "definition", "status", "node"), func(context.Context) ([]types.Row, error) {
			var rows []types.Row
			node := s.e.nodeName()
			for _, d := range s.e.objects(catalog.KindView) {
				rows = append(rows, textRow(d.Name, d.Query, s.e.viewStatus(d), node))
			}
			// Views created WITH NO DATA, until their REFRESH.
			for _, d := range s.e.objects(catalog.KindUnpopulatedView) {
				rows = append(rows, textRow(d.Name, d.Query, "not populated", node))
			}
			slices.SortFunc(rows, func(a, b types.Row) int { return strings.Compare(a[0].S, b[0].S) })
			return rows, nil
		}), nil
	case "tables":
		return showResult(textCols("name"), func(context.Context) ([]types.Row, error) {
			var rows []types.Row
			for _, d := range s.e.objects(catalog.KindTable) {
				rows = append(rows, textRow(d.Name))
			}
			return rows, nil
		}), nil
	case "checkpoints":
		return showResult(meta.CheckpointColumns, func(context.Context) ([]types.Row, error) {
			return s.e.node.CheckpointRows(), nil
		}), nil
	case "health":
		return showResult(textCols("status", "detail"), func(context.Context) ([]types.Row, error) {
			ok, failures := s.e.coord.Healthy()
			if ok {
				return []types.Row{textRow("healthy", fmt.Sprintf("%d consecutive checkpoint failures", failures))}, nil
			}
			return []types.Row{textRow("unhealthy", fmt.Sprintf("%d consecutive checkpoint failures exceed execution.checkpointing.tolerable-failed-checkpoints", failures))}, nil
		}), nil
	case "savepoints":
		return showResult(savepointColumns, func(context.Context) ([]types.Row, error) { return s.e.savepointRows() }), nil
	case "all":
		return showResult(textCols("name", "setting", "description"), func(context.Context) ([]types.Row, error) {
			var rows []types.Row
			for _, st := range config.Settings {
				rows = append(rows, textRow(st.Key, s.e.setting(st.Key), st.Description))
			}
			keys := make([]string, 0, len(s.settings))
			for k := range s.settings {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				rows = append(rows, textRow(k, s.settings[k], "session parameter"))
			}
			return rows, nil
		}), nil
	}
	name := n.Target
	if config.Known(name) {
		return showResult(textCols(name), func(context.Context) ([]types.Row, error) {
			return []types.Row{textRow(s.e.setting(name))}, nil
		}), nil
	}
	if _, ok := s.settings[name]; !ok {
		if !knownSessionParam(name) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
		}
	}
	label := name
	if l, ok := settingLabels[name]; ok {
		label = l
	}
	return showResult(textCols(label), func(context.Context) ([]types.Row, error) {
		return []types.Row{textRow(s.settings[name])}, nil
	}), nil
}

// settingLabels are the session parameters whose SHOW column PostgreSQL
// names with capitals (its GUC names).
var settingLabels = map[string]string{"timezone": "TimeZone", "datestyle": "DateStyle", "intervalstyle": "IntervalStyle"}

func (s *session) prepareSet(n *front.Set) (*prepared, error) {
	if n.System || config.Known(n.Name) {
		if !config.Known(n.Name) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name).
				WithHint("SHOW ALL lists the server settings.")
		}
		tag := "SET"
		if n.System {
			tag = "ALTER SYSTEM"
		}
		return command(func(context.Context) (string, error) {
			return tag, s.e.node.ChangeSetting(meta.SettingChange{Key: n.Name, Value: n.Value, Reset: n.Reset, System: n.System})
		}), nil
	}
	tag := "SET"
	if n.Reset && !n.Default {
		tag = "RESET"
	}
	if n.Name != "all" && !knownSessionParam(n.Name) {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", n.Name).
			WithHint("SHOW ALL lists the parameters.")
	}
	return command(func(context.Context) (string, error) {
		switch {
		case n.Reset && n.Name == "all":
			s.resetAllSettings()
		case n.Reset:
			s.setSetting(n.Name, s.resetValue(n.Name), n.Local)
		default:
			for _, m := range append([]*front.Set{n}, n.Also...) {
				if err := s.applySetting(m.Name, m.Value, n.Local); err != nil {
					return "", err
				}
			}
		}
		return tag, nil
	}), nil
}

// applySetting is SET [LOCAL] name = value for a session parameter (and
// set_config): it checks the value the parameters streamdb acts on need.
func (s *session) applySetting(name, value string, local bool) error {
	switch {
	case name == "timezone":
		v, err := utcTimeZone(value)
		if err != nil {
			return err
		}
		value = v
	case name == "statement_timeout" || name == "idle_in_transaction_session_timeout" || name == "lock_timeout":
		d, err := parseTimeout(name, value)
		if err != nil {
			return err
		}
		value = formatTimeout(d)
	case name == "transaction_spill_memory":
		if _, err := parseMemory(value); err != nil {
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"transaction_spill_memory\": %q", value).
				WithHint("Give a size such as 64MB (0 keeps a transaction's changes in memory).")
		}
	case name == "query_max_memory":
		if _, err := parseMemory(value); err != nil {
			return err
		}
	case name == "read_your_writes":
		v, ok := parseBool(value)
		if !ok {
			return sqlerr.New(sqlerr.InvalidParameterValue, "parameter \"read_your_writes\" requires a Boolean value")
		}
		value = v
	}
	s.setSetting(name, value, local)
	return nil
}

// formatTimeout renders a timeout as SHOW does in PostgreSQL: whole
// milliseconds in the largest unit that divides them evenly ("1s",
// "90s", "1500ms", "2min"), and 0 as "0".
func formatTimeout(d time.Duration) string {
	ms := d.Round(time.Millisecond).Milliseconds()
	if ms == 0 {
		return "0"
	}
	units := []struct {
		name string
		ms   int64
	}{{"d", 86400000}, {"h", 3600000}, {"min", 60000}, {"s", 1000}}
	for _, u := range units {
		if ms%u.ms == 0 {
			return strconv.FormatInt(ms/u.ms, 10) + u.name
		}
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

// sessionParams are PostgreSQL parameters that drivers and tools set; SET
// accepts and SHOW returns them (most have no effect in streamdb).
// Parameters with a dot are custom ones, accepted as PostgreSQL does.
var sessionParams = map[string]bool{
	"application_name": true, "client_encoding": true, "datestyle": true, "timezone": true,
	"intervalstyle": true, "extra_float_digits": true, "search_path": true, "statement_timeout": true,
	"lock_timeout": true, "idle_in_transaction_session_timeout": true, "client_min_messages": true,
	"standard_conforming_strings": true, "default_transaction_isolation": true, "transaction_isolation": true,
	"bytea_output": true, config.SynchronousCommit: true, "work_mem": true, "jit": true, "row_security": true,
	"default_transaction_read_only": true, "transaction_read_only": true, "escape_string_warning": true,
	"server_version": true, "server_encoding": true, "integer_datetimes": true, "max_identifier_length": true,
	"names": true, "session_authorization": true, "role": true, "lc_messages": true, "lc_monetary": true,
	"lc_numeric": true, "lc_time": true, "geqo": true, "enable_seqscan": true, "statement_timeout_ms": true,
	"tcp_keepalives_idle": true, "tcp_keepalives_interval": true, "tcp_keepalives_count": true,
	"deadlock_timeout": true, "timezone_abbreviations": true, "default_text_search_config": true,
}

func knownSessionParam(name string) bool {
	_, ok := defaultSessionSettings[name]
	return ok || sessionParams[name] || strings.Contains(name, ".")
}

// parseBool reads a Boolean setting as PostgreSQL does, returning "on" or
// "off".
func parseBool(v string) (string, bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
	case "on", "true", "yes", "1", "t", "y":
		return "on", true
	case "off", "false", "no", "0", "f", "n":
		return "off", true
	}
	return "", false
}

// parseMemory reads a memory setting as PostgreSQL does: a number of
// kilobytes, or a number with a unit (B, kB, MB, GB, TB).
func parseMemory(v string) (int64, error) {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "'"))
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	units := map[string]int64{"": 1 << 10, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
	unit, ok := units[strings.ToLower(strings.TrimSpace(v[i:]))]
	if err != nil || !ok || n > (1<<62)/unit {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"query_max_memory\": %q", v).
			WithHint("Give a size such as 512MB or 2GB (0 for no bound).")
	}
	return n * unit, nil
}
