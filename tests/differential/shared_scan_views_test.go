package differential

// sharedScanViews read the events stream more than once, so that their
// scans share one reader (and one decoder, told the union of the columns
// each scan reads): a self-join with the stream's own aggregate, two
// window aggregates joined (Nexmark q5's shape), and a union of branches
// that read different text columns (and whose column is VARCHAR, as in
// PostgreSQL, though its last branch is TEXT).
var sharedScanViews = []viewSpec{
	{name: "s_user_max", phase: 0, query: `SELECT e.id, e.user_id, e.amount, e.tag, u.n
		FROM events e JOIN (SELECT user_id, count(*) AS n, max(amount) AS mx FROM events GROUP BY user_id) u
		ON e.user_id = u.user_id AND e.amount = u.mx`},
	{name: "s_kind_tag_union", phase: 1, query: `SELECT kind AS k, amount::bigint AS v FROM events WHERE qty > 5
		UNION ALL SELECT tag, qty::bigint FROM events WHERE amount < 0
		UNION ALL SELECT kind || '/' || tag, id FROM events WHERE id % 11 = 0`},
	{name: "s_hot_kinds", phase: 2, query: `SELECT c.kind, c.ws, c.n FROM
		(SELECT kind, window_start AS ws, count(*) AS n
		 FROM TUMBLE(events, ts, INTERVAL '10' MINUTE) GROUP BY kind, window_start) c
		JOIN (SELECT ws2, max(n2) AS mx FROM
		  (SELECT window_start AS ws2, kind, count(*) AS n2
		   FROM TUMBLE(events, ts, INTERVAL '10' MINUTE) GROUP BY window_start, kind) x GROUP BY ws2) m
		ON c.ws = m.ws2 AND c.n >= m.mx`,
		pg: `SELECT c.kind, c.ws, c.n FROM
		(SELECT kind, date_bin('10 minutes', ts, TIMESTAMP '1970-01-01') AS ws, count(*) AS n
		 FROM events WHERE ts IS NOT NULL GROUP BY 1, 2) c
		JOIN (SELECT ws2, max(n2) AS mx FROM
		  (SELECT date_bin('10 minutes', ts, TIMESTAMP '1970-01-01') AS ws2, kind, count(*) AS n2
		   FROM events WHERE ts IS NOT NULL GROUP BY 1, 2) x GROUP BY ws2) m
		ON c.ws = m.ws2 AND c.n >= m.mx`},
	// The same two columns picked from counts grouped in two orders.
	{name: "s_top_tags", phase: 1, query: `SELECT c.kind, c.tag, c.n FROM
		(SELECT kind, tag, count(*) AS n FROM events GROUP BY kind, tag) c
		JOIN (SELECT kind, max(n) AS mx FROM
		  (SELECT tag, kind, count(*) AS n FROM events GROUP BY tag, kind) x GROUP BY kind) m
		ON c.kind IS NOT DISTINCT FROM m.kind AND c.n = m.mx`},
}

func init() { views = append(views, sharedScanViews...) }
