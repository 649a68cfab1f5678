package admin

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
)

// table is a SQL result picked apart for a template.
type table struct {
	Columns []string
	Rows    [][]string
}

// query runs sql and returns its result, or an empty table and the error
// text to show.
func (q *request) query(sql string) (table, string) {
	res, err := q.backend.ConsoleQuery(q.ctx, q.user, sql)
	if err != nil {
		return table{}, err.Error()
	}
	return table{Columns: res.Columns, Rows: res.Rows}, ""
}

// col returns the index of column name in t, or -1.
func (t table) col(name string) int {
	for i, c := range t.Columns {
		if c == name {
			return i
		}
	}
	return -1
}

// viewRow is one view on the overview.
type viewRow struct {
	Name, Status         string
	Freshness            string
	Lag, RowsIn, RowsOut string
	FailedRows           float64
}

// streamRow is one stream on the overview, with the views reading it.
type streamRow struct {
	Name, Subject, JetStream, Malformed string
	Readers                             []string
	// UnmatchedKeys are message fields no column matches, with their
	// counts; NeverSeen the columns no message had: together, a stream
	// declared with other names than its producer's.
	UnmatchedKeys, NeverSeen string
}

type overviewBody struct {
	Views   []viewRow
	Tables  []string
	Streams []streamRow
}

func (c *console) overview(q *request) (string, pageData) {
	data := pageData{Title: "Overview", Tab: "overview"}
	autoRefresh(q, &data)
	m := gatherViewMetrics()
	body := overviewBody{}
	views, err := q.query("SHOW MATERIALIZED VIEWS")
	data.Error = firstError(data.Error, err)
	for _, r := range views.Rows {
		name := r[views.col("name")]
		v := viewRow{Name: name, Status: r[views.col("status")]}
		if f, ok := m.freshness[name]; ok {
			v.Freshness = strconv.FormatFloat(f, 'f', 3, 64) + " s"
		}
		v.Lag = formatCount(m.lag[name])
		v.RowsIn, v.RowsOut = formatCount(m.rowsIn[name]), formatCount(m.rowsOut[name])
		v.FailedRows = m.rowErrors[name]
		body.Views = append(body.Views, v)
	}
	tables, err := q.query("SHOW TABLES")
	data.Error = firstError(data.Error, err)
	for _, r := range tables.Rows {
		body.Tables = append(body.Tables, r[0])
	}
	streams, err := q.query("SHOW STREAMS")
	data.Error = firstError(data.Error, err)
	// What the readers found in the messages; a page without it still
	// shows the rest.
	members, _ := q.query("SELECT * FROM streamdb_streams")
	for _, r := range streams.Rows {
		s := streamRow{Name: r[streams.col("name")], Subject: r[streams.col("subject")],
			JetStream: r[streams.col("jetstream_stream")], Malformed: r[streams.col("skipped_messages")]}
		if m := members.where("name", s.Name); len(m.Rows) == 1 {
			if i := m.col("unmatched_keys"); i >= 0 {
				s.UnmatchedKeys = m.Rows[0][i]
			}
			if i := m.col("never_seen_columns"); i >= 0 {
				s.NeverSeen = m.Rows[0][i]
			}
		}
		for _, vl := range m.streamReaders[s.Name] {
			s.Readers = append(s.Readers, fmt.Sprintf("%s (%s behind)", vl.view, formatCount(vl.lag)))
		}
		body.Streams = append(body.Streams, s)
	}
	data.Body = body
	return "overview.html", data
}

type viewBody struct {
	Name       string
	Definition string
	Status     string
	Freshness  string
	FailedRows float64
	Rows       viewRows
	Chart      template.HTML
	Dataflow   string
	Operators  table
	State      table
	Errors     table
}

func (c *console) view(q *request) (string, pageData) {
	name := q.r.PathValue("name")
	data := pageData{Title: "View " + name, Tab: "overview"}
	autoRefresh(q, &data)
	body := viewBody{Name: name}
	views, err := q.query("SHOW MATERIALIZED VIEWS")
	data.Error = firstError(data.Error, err)
	for _, r := range views.Rows {
		if r[views.col("name")] == name {
			body.Definition, body.Status = r[views.col("definition")], r[views.col("status")]
		}
	}
	m := gatherViewMetrics()
	if f, ok := m.freshness[name]; ok {
		body.Freshness = strconv.FormatFloat(f, 'f', 3, 64) + " s"
	}
	body.FailedRows = m.rowErrors[name]
	body.Chart = viewChartSVG(c.history.series(name))
	var rerr string
	body.Rows, rerr = readViewRows(q, name)
	data.Error = firstError(data.Error, rerr)
	flow, ferr := q.backend.ConsoleDataflow(q.ctx, q.user, name)
	if ferr != nil {
		data.Error = firstError(data.Error, ferr.Error())
	}
	body.Dataflow = flow
	body.Operators, err = q.query("SELECT * FROM streamdb_operators")
	data.Error = firstError(data.Error, err)
	body.Operators = body.Operators.where("view", name)
	body.State, err = q.query("SELECT * FROM streamdb_state")
	data.Error = firstError(data.Error, err)
	body.State = body.State.where("object", name)
	body.Errors, err = q.query("SELECT * FROM streamdb_view_errors")
	data.Error = firstError(data.Error, err)
	body.Errors = body.Errors.where("view", name)
	data.Body = body
	return "view.html", data
}

type checkpointsBody struct {
	Completed, Failed int
	Latest            map[string]string
	History           table
	Chart             template.HTML
}

func (c *console) checkpoints(q *request) (string, pageData) {
	data := pageData{Title: "Checkpoints", Tab: "checkpoints"}
	autoRefresh(q, &data)
	cps, err := q.query("SHOW CHECKPOINTS")
	data.Error = firstError(data.Error, err)
	body := checkpointsBody{History: cps}
	status := cps.col("status")
	// SHOW CHECKPOINTS lists the oldest first: the last completed one is
	// the latest.
	for _, r := range cps.Rows {
		switch r[status] {
		case "completed":
			body.Completed++
			body.Latest = rowMap(cps, r)
		case "failed", "aborted":
			body.Failed++
		}
	}
	body.Chart = checkpointChartSVG(cps)
	data.Body = body
	return "checkpoints.html", data
}

type savepointsBody struct {
	Savepoints table
	Confirm    string // a savepoint to confirm rolling back to
}

func (c *console) savepoints(q *request) (string, pageData) {
	data := pageData{Title: "Savepoints", Tab: "savepoints"}
	sps, err := q.query("SHOW SAVEPOINTS")
	data.Error = err
	data.Body = savepointsBody{Savepoints: sps}
	return "savepoints.html", data
}

// savepointAction creates, releases or rolls back to a savepoint. Rolling
// back asks for confirmation first: the form is sent again with
// confirm=yes.
func (c *console) savepointAction(q *request) (string, pageData) {
	action, name := q.r.PostFormValue("action"), strings.TrimSpace(q.r.PostFormValue("name"))
	var stmt, flash string
	switch action {
	case "create":
		stmt, flash = "SAVEPOINT "+quoteIdent(name), "Savepoint "+name+" created."
	case "release":
		stmt, flash = "RELEASE SAVEPOINT "+quoteIdent(name), "Savepoint "+name+" released."
	case "rollback":
		if q.r.PostFormValue("confirm") != "yes" {
			name, data := c.savepoints(q)
			body := data.Body.(savepointsBody)
			body.Confirm = q.r.PostFormValue("name")
			data.Body = body
			return name, data
		}
		stmt, flash = "ROLLBACK TO SAVEPOINT "+quoteIdent(name), "Rolled back to savepoint "+name+"."
	default:
		tmpl, data := c.savepoints(q)
		data.Error = "unknown action " + strconv.Quote(action)
		return tmpl, data
	}
	_, err := q.query(stmt)
	tmpl, data := c.savepoints(q)
	if err != "" {
		data.Error = err
	} else {
		data.Flash = flash
	}
	return tmpl, data
}

// where keeps the rows whose column col is value.
func (t table) where(col, value string) table {
	i := t.col(col)
	out := table{Columns: t.Columns}
	for _, r := range t.Rows {
		if i >= 0 && r[i] == value {
			out.Rows = append(out.Rows, r)
		}
	}
	return out
}

func firstError(have, next string) string {
	if have != "" {
		return have
	}
	return next
}

func rowMap(t table, r []string) map[string]string {
	m := make(map[string]string, len(r))
	for i, c := range t.Columns {
		m[c] = r[i]
	}
	return m
}

func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// failedRows says how many rows failed, "1 row failed" or "3 rows failed".
func failedRows(n float64) string {
	if n == 1 {
		return "1 row failed"
	}
	return formatCount(n) + " rows failed"
}

// quoteIdent quotes as PostgreSQL does, so any name a user typed reaches
// SQL as that name.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
