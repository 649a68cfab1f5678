package admin

import "strings"

// queryRowsLimit bounds the rows the query page shows.
const queryRowsLimit = 1000

type queryBody struct {
	SQL       string
	Ran       bool
	Result    table
	Tag       string
	Truncated bool
}

// queryPage shows the query form; a POST runs its SELECT as the
// logged-in user (Backend.ConsoleSelect refuses anything but a query).
func (c *console) queryPage(q *request) (string, pageData) {
	data := pageData{Title: "Query", Tab: "query"}
	body := queryBody{}
	if q.r.Method == "POST" {
		body.SQL = strings.TrimSpace(q.r.PostFormValue("sql"))
		if body.SQL != "" {
			res, err := q.backend.ConsoleSelect(q.ctx, q.user, body.SQL, queryRowsLimit)
			if err != nil {
				data.Error = err.Error()
			} else {
				body.Ran = true
				body.Result = table{Columns: res.Columns, Rows: res.Rows}
				body.Tag, body.Truncated = res.Tag, res.Truncated
			}
		}
	}
	data.Body = body
	return "query.html", data
}
