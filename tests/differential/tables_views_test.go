package differential

// Views over the tables (with their updates and deletes), joins of the
// events stream with them, windows, unions, top-N over changing rows,
// CTEs, views over views.

const joinKindQuery = `SELECT e.kind, a.region, count(*) AS n, sum(e.amount) AS s
		FROM events e JOIN accounts a ON e.user_id = a.user_id GROUP BY e.kind, a.region`

var tableViews = []viewSpec{
	{name: "t_region", phase: 0, query: `SELECT region, count(*) AS n, sum(balance) AS total, min(balance) AS lo,
		max(balance) AS hi, count(DISTINCT tier) AS tiers, avg(balance) AS mean
		FROM accounts GROUP BY region`},
	{name: "t_join_kind", phase: 0, query: joinKindQuery},
	{name: "t_left", phase: 0, query: `SELECT a.user_id, a.region, count(e.id) AS n, sum(e.amount) AS s,
		max(e.ts) + INTERVAL '1 hour' AS last_plus
		FROM accounts a LEFT JOIN events e ON e.user_id = a.user_id AND e.amount > 0
		GROUP BY a.user_id, a.region`},
	{name: "t_notes", phase: 0, query: `SELECT note, count(*) AS n, sum(weight) AS w, min(weight) AS lo, max(weight) AS hi
		FROM notes GROUP BY note`},
	{name: "w_tumble", phase: 0,
		query: `SELECT window_start, window_end, kind, count(*) AS n, sum(amount) AS s, max(price) AS mp
		FROM TUMBLE(events, ts, INTERVAL '10' MINUTE) GROUP BY window_start, window_end, kind`,
		pg: `SELECT date_bin('10 minutes', ts, TIMESTAMP '1970-01-01') AS window_start,
		date_bin('10 minutes', ts, TIMESTAMP '1970-01-01') + INTERVAL '10 minutes' AS window_end,
		kind, count(*) AS n, sum(amount) AS s, max(price) AS mp
		FROM events WHERE ts IS NOT NULL GROUP BY 1, 2, 3`},
	{name: "t_union_all", phase: 0, query: `SELECT region AS k, balance AS v FROM accounts
		UNION ALL SELECT kind, amount::bigint FROM events WHERE qty > 50`},

	{name: "t_full", phase: 1, query: `SELECT a.user_id AS au, c.user_id AS cu, a.tier, c.n
		FROM accounts a FULL JOIN (SELECT user_id, count(*) AS n FROM events WHERE kind = 'buy' GROUP BY user_id) c
		ON a.user_id = c.user_id`},
	{name: "t_right", phase: 1, query: `SELECT n.note, n.weight, a.name, a.region
		FROM notes n RIGHT JOIN accounts a ON n.user_id = a.user_id WHERE a.tier IS DISTINCT FROM 0`},
	{name: "t_union", phase: 1, query: `SELECT user_id FROM accounts WHERE tier = 1
		UNION SELECT user_id FROM events WHERE amount > 900`},
	{name: "t_top_balance", phase: 1, query: `SELECT user_id, name, balance FROM accounts WHERE balance IS NOT NULL
		ORDER BY balance DESC, user_id LIMIT 7`},
	{name: "t_region_top2", phase: 1, query: `SELECT region, user_id, balance, rn FROM (
		SELECT region, user_id, balance,
		row_number() OVER (PARTITION BY region ORDER BY balance DESC NULLS LAST, user_id) AS rn
		FROM accounts) t WHERE rn <= 2`},
	{name: "w_hop", phase: 1,
		query: `SELECT window_start, count(*) AS n, sum(qty) AS sq
		FROM HOP(events, ts, INTERVAL '5' MINUTE, INTERVAL '15 minutes') GROUP BY window_start`,
		pg: `SELECT date_bin('5 minutes', ts, TIMESTAMP '1970-01-01') - g.i * INTERVAL '5 minutes' AS window_start,
		count(*) AS n, sum(qty) AS sq
		FROM events CROSS JOIN generate_series(0, 2) AS g(i) WHERE ts IS NOT NULL GROUP BY 1`},
	{name: "t_on_view", phase: 1,
		query: `SELECT region, sum(n) AS n, sum(s) AS s FROM t_join_kind GROUP BY region`,
		pg:    `SELECT region, sum(n) AS n, sum(s) AS s FROM (` + joinKindQuery + `) t_join_kind GROUP BY region`},

	{name: "t_cte", phase: 2, query: `WITH rich AS (SELECT user_id, region FROM accounts WHERE balance > 300)
		SELECT r.region, count(*) AS n, count(DISTINCT e.kind) AS kinds
		FROM rich r JOIN events e ON e.user_id = r.user_id GROUP BY r.region`},
	{name: "t_expr", phase: 2, query: `SELECT user_id, coalesce(name, '?') || '/' || coalesce(region, '-') AS label,
		nullif(tier, 0) AS t,
		CASE WHEN balance > 500 THEN 'rich' WHEN balance < 0 THEN 'debt' ELSE 'ok' END AS class,
		balance::numeric / 3 AS third, upper(name) AS uname
		FROM accounts WHERE region IS DISTINCT FROM 'apac'`},
	{name: "t_notes_join", phase: 2, query: `SELECT a.region, count(*) AS n, count(DISTINCT n.note) AS notes, sum(n.weight) AS w
		FROM notes n JOIN accounts a ON a.user_id = n.user_id GROUP BY a.region HAVING count(*) > 1`},
	{name: "t_distinct", phase: 2, query: `SELECT DISTINCT region, tier FROM accounts`},
	{name: "t_three_way", phase: 2, query: `SELECT e.kind, n.note, count(*) AS c, sum(n.weight) AS w
		FROM events e JOIN accounts a ON e.user_id = a.user_id JOIN notes n ON n.user_id = a.user_id
		WHERE a.tier >= 1 GROUP BY e.kind, n.note`},
}

func init() { views = append(views, tableViews...) }
