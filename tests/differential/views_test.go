package differential

// viewSpec is one materialized view: its defining query, run unchanged as a
// batch query in PostgreSQL, and the columns that are sums or averages of
// DOUBLE PRECISION (accumulated in a different order on each side, so they
// are compared with a relative tolerance when the exact text differs).
type viewSpec struct {
	name  string
	query string
	// phase: 0 = created before any event, 1 = after the first rounds
	// (flushed), 2 = later, while events are still being processed.
	phase     int
	floatAggs []string
	// pg, when set, is PostgreSQL's spelling of the query (for TUMBLE and
	// HOP, and for views over views, which PostgreSQL does not have).
	pg string
}

var views = []viewSpec{
	// ---- created before events flow ----
	{name: "v_proj", phase: 0, query: `SELECT id, user_id,
		amount / 7 AS a_div, amount % 7 AS a_mod,
		amount / NULLIF(qty, 0) AS a_div_q, amount % NULLIF(qty, 0) AS a_mod_q,
		amount::bigint * qty AS a_times_q, amount - qty AS a_minus_q, -amount AS neg_a,
		id % 1000 AS id_mod, id / 1000 AS id_div, price * 2 AS p2, -price AS neg_p, price + qty AS p_plus_q, price / 4 AS p_quarter,
		qty::int + 1 AS q1, qty * 3 AS q3
		FROM events`},
	{name: "v_case", phase: 0, query: `SELECT id,
		CASE WHEN amount IS NULL THEN 'none' WHEN amount < 0 THEN 'neg' WHEN amount = 0 THEN 'zero'
		     WHEN amount < 100 THEN 'small' ELSE 'big' END AS bucket,
		CASE kind WHEN 'click' THEN 1 WHEN 'buy' THEN 2 END AS kcode,
		COALESCE(kind, tag, 'nothing') AS k, COALESCE(amount, qty, -1) AS a,
		NULLIF(kind, 'view') AS nv, NULLIF(qty, 0) AS nq,
		kind IN ('click', 'buy', 'o''brien') AS k_in, kind NOT IN ('view', 'refund') AS k_not_in,
		amount BETWEEN -100 AND 100 AS a_btw, qty NOT BETWEEN 0 AND 10 AS q_not_btw,
		qty IN (1, 2, NULL) AS q_in_null, ok AND amount > 0 AS ok_and, ok OR qty > 5 AS ok_or,
		kind = 'back\slash' AS is_backslash,
		CASE WHEN ok THEN kind ELSE kind || '!' END AS ck_text, CASE WHEN ok THEN kind || '!' ELSE tag END AS ck_varchar,
		COALESCE(tag, kind || '?') AS ct_varchar
		FROM events WHERE id % 3 <> 1`},
	{name: "v_str", phase: 0, query: `SELECT id, kind || ':' || tag AS kt, lower(tag) AS lt, upper(kind) AS uk,
		length(tag) AS tag_len, substr(tag, 2, 3) AS st, substr(kind, 2) AS sk2,
		tag LIKE '%a%' AS has_a, tag LIKE '_b%' AS b_second, kind NOT LIKE 'c%' AS not_c,
		kind LIKE '%\%' AS ends_pct, tag LIKE '%\_%' AS has_underscore,
		substr(tag, 0, 2) AS st0, substr(tag, -1, 3) AS stneg, tag < 'b' AS tag_lt_b, tag = '' AS tag_empty,
		id::varchar || '#' AS ids, amount::text AS a_text, ok::text AS ok_text
		FROM events`},
	{name: "v_time", phase: 0, query: `SELECT id, ts, date_trunc('minute', ts) AS m, date_trunc('hour', ts) AS h,
		date_part('minute', ts) AS mi, date_part('second', ts) AS s, date_part('epoch', ts) AS ep,
		date_part('milliseconds', ts) AS ms, date_part('dow', ts) AS dow,
		date_trunc('second', ts) AS sec, date_trunc('day', ts) AS day, ts::text AS ts_text,
		ts IS NULL AS no_ts,
		ts BETWEEN '2026-03-14 09:00:00' AND '2026-03-14 10:00:00' AS in_win
		FROM events WHERE ts IS NOT NULL OR id % 2 = 0`},
	{name: "v_by_user", phase: 0, floatAggs: []string{"s_price", "avg_p"}, query: `SELECT user_id,
		count(*) AS n, count(amount) AS n_amount, count(DISTINCT kind) AS n_kinds,
		sum(amount) AS s_amount, sum(id) AS s_id, sum(price) AS s_price,
		min(amount) AS min_a, max(amount) AS max_a, avg(amount) AS avg_a, avg(price) AS avg_p
		FROM events GROUP BY user_id`},
	{name: "v_by_kind_ok", phase: 0, query: `SELECT kind, ok, count(*) AS n,
		min(tag) AS min_tag, max(tag) AS max_tag, min(ts) AS first_ts, max(ts) AS last_ts,
		min(price) AS min_p, max(price) AS max_p, sum(qty) AS s_qty, avg(qty) AS avg_q
		FROM events GROUP BY kind, ok`},
	{name: "v_minute", phase: 0, query: `SELECT date_trunc('minute', ts) AS minute, count(*) AS n,
		sum(amount) AS s, count(DISTINCT user_id) AS users
		FROM events GROUP BY date_trunc('minute', ts)`},
	{name: "v_global", phase: 0, floatAggs: []string{"sp", "ap"}, query: `SELECT count(*) AS n, count(price) AS np,
		sum(amount) AS sa, sum(id) AS sid, sum(price) AS sp, avg(amount) AS aa, avg(price) AS ap,
		min(ts) AS mints, max(ts) AS maxts, min(kind) AS mink, max(kind) AS maxk,
		count(DISTINCT tag) AS ntags
		FROM events`},
	{name: "v_global_empty", phase: 0, query: `SELECT count(*) AS n, count(kind) AS nk, sum(amount) AS s,
		avg(price) AS ap, max(ts) AS last_ts, min(tag) AS min_tag
		FROM events WHERE amount > 2100000000`},
	{name: "v_distinct", phase: 0, query: `SELECT DISTINCT kind, qty % 5 AS q5 FROM events`},
	{name: "v_filter", phase: 0, query: `SELECT id, user_id, kind, amount, price, tag, ts FROM events
		WHERE amount BETWEEN -100 AND 500 AND kind IN ('click', 'buy', 'o''brien')
		  AND (tag IS NULL OR tag NOT LIKE '% %')`},
	// Top-N: ORDER BY covers every projected column, so rows that tie
	// are identical and the comparison is exact.
	{name: "v_top_amount", phase: 0, query: `SELECT id, user_id, amount FROM events
		ORDER BY amount DESC NULLS LAST, id, user_id NULLS FIRST LIMIT 10`},

	// ---- created after the first rounds (backfill) ----
	{name: "v_band", phase: 1, query: `SELECT
		CASE WHEN price < 0 THEN 'negative' WHEN price < 10 THEN 'cheap' WHEN price < 100 THEN 'mid'
		     ELSE 'pricey' END AS band,
		kind, count(*) AS n, sum(amount::bigint * qty) AS revenue, max(qty) AS max_q
		FROM events
		GROUP BY CASE WHEN price < 0 THEN 'negative' WHEN price < 10 THEN 'cheap' WHEN price < 100 THEN 'mid'
		     ELSE 'pricey' END, kind
		HAVING count(*) > 5`},
	{name: "v_user_kind", phase: 1, query: `SELECT user_id, kind, count(*) AS n, sum(amount) AS s
		FROM events WHERE ok IS DISTINCT FROM false
		GROUP BY user_id, kind HAVING sum(amount) > 1000 OR count(*) >= 10`},
	{name: "v_bool", phase: 1, query: `SELECT user_id % 10 AS ub, bool_and(ok) AS all_ok, bool_or(ok) AS any_ok,
		count(ok) AS n_ok FROM events GROUP BY user_id % 10`},
	{name: "v_hour_kind", phase: 1, query: `SELECT date_trunc('hour', ts) AS hr, date_part('hour', ts) AS h,
		lower(kind) AS lk, count(*) AS n, avg(amount) AS avg_a, min(price) AS min_p, max(ts) AS last_ts
		FROM events WHERE kind IS NOT NULL
		GROUP BY date_trunc('hour', ts), date_part('hour', ts), lower(kind)`},
	{name: "v_kind_top3", phase: 1, query: `SELECT kind, id, amount, rn FROM (
		SELECT kind, id, amount, row_number() OVER (PARTITION BY kind ORDER BY amount DESC NULLS LAST, id NULLS FIRST) AS rn
		FROM events WHERE amount IS NOT NULL) t WHERE rn <= 3`},
	{name: "v_proj2", phase: 1, query: `SELECT id, tag, qty, ok, price::int AS p_int, qty::double precision / 4 AS qd,
		round(price) AS rp, abs(price) AS ap, abs(qty) AS aq, abs(amount) AS aa,
		kind IS DISTINCT FROM tag AS kd, ok IS NOT DISTINCT FROM true AS okt, NOT ok AS nok
		FROM events WHERE price > 0 OR qty < 0`},

	// ---- created later, while events are in flight ----
	{name: "v_distinct_users", phase: 2, query: `SELECT DISTINCT user_id, ok FROM events WHERE amount > 0`},
	{name: "v_tag_stats", phase: 2, query: `SELECT tag, count(*) AS n, count(DISTINCT user_id) AS du,
		min(id) AS min_id, max(id) AS max_id, sum(qty) AS sq
		FROM events GROUP BY tag HAVING count(*) > 1 AND avg(amount) > -1000`},
	{name: "v_global_ok", phase: 2, query: `SELECT count(*) AS n, count(DISTINCT kind) AS dk, sum(qty) AS sq,
		avg(qty) AS aq, min(amount) AS mina, max(price) AS maxp, sum(amount::bigint) AS sab
		FROM events WHERE ok`},
	{name: "v_expr_keys", phase: 2, floatAggs: []string{"sp", "ap"}, query: `SELECT amount % 3 AS m3, qty / 10 AS q10,
		COALESCE(kind, '?') AS k, count(*) AS n, sum(price) AS sp, avg(price) AS ap
		FROM events GROUP BY amount % 3, qty / 10, COALESCE(kind, '?')`},
	// Top-N over aggregates: counts grow, so rows leave and enter the top.
	{name: "v_top_users", phase: 2, query: `SELECT user_id, count(*) AS n, sum(amount) AS s FROM events
		GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT 5 OFFSET 1`},
	{name: "v_kind_top_users", phase: 2, query: `SELECT kind, user_id, n, rn FROM (
		SELECT kind, user_id, n, row_number() OVER (PARTITION BY kind ORDER BY n DESC, user_id) AS rn
		FROM (SELECT kind, user_id, count(*) AS n FROM events GROUP BY kind, user_id) g) t WHERE 2 >= rn`},
	{name: "v_casts", phase: 2, query: `SELECT id, amount::double precision AS ad, qty::bigint AS qb,
		ts::date AS d, ts > '2026-03-14 09:30:00'::timestamp AS later,
		length(kind || tag) AS kt_len, user_id::text || '/' || COALESCE(kind, '') AS uk,
		upper(substr(tag, 1, 1)) AS initial, price::varchar AS p_text,
		round(price) AS rp, price::numeric AS p_num, round(price::numeric, 1) AS p_round1,
		amount::numeric * 2 AS a_num2
		FROM events WHERE id % 4 = 0`},
}

// adhocQuery is a batch query over views in streamdb and the same
// computation over the base table in PostgreSQL. Ordered queries must match
// row by row (their ORDER BY breaks every tie).
type adhocQuery struct {
	name      string
	streamdb  string
	postgres  string
	ordered   bool
	floatCols []string
	views     []string // views it reads; skipped if one of them is missing
}

// sub returns the defining query of a view, for the PostgreSQL side.
func sub(name string) string {
	for _, v := range views {
		if v.name == name {
			return "(" + v.query + ") AS " + name
		}
	}
	panic("no view " + name)
}

var adhoc = []adhocQuery{
	{name: "top5_users_by_count", ordered: true, views: []string{"v_by_user"},
		streamdb: `SELECT user_id, n, s_amount FROM v_by_user ORDER BY n DESC, user_id LIMIT 5`,
		postgres: `SELECT user_id, n, s_amount FROM ` + sub("v_by_user") + ` ORDER BY n DESC, user_id LIMIT 5`},
	{name: "users_sorted_nulls", ordered: true, views: []string{"v_by_user"},
		streamdb: `SELECT user_id, n FROM v_by_user ORDER BY user_id DESC LIMIT 4`,
		postgres: `SELECT user_id, n FROM ` + sub("v_by_user") + ` ORDER BY user_id DESC LIMIT 4`},
	{name: "sum_over_users", views: []string{"v_by_user"},
		streamdb: `SELECT sum(n) AS n, count(*) AS groups, max(s_amount) AS max_s, min(avg_a) AS min_avg, sum(s_id) AS sid FROM v_by_user`,
		postgres: `SELECT sum(n) AS n, count(*) AS groups, max(s_amount) AS max_s, min(avg_a) AS min_avg, sum(s_id) AS sid FROM ` + sub("v_by_user")},
	{name: "filter_kinds", ordered: true, views: []string{"v_filter"},
		streamdb: `SELECT kind, count(*) AS n, sum(amount) AS s FROM v_filter WHERE amount > 0 GROUP BY kind ORDER BY kind`,
		postgres: `SELECT kind, count(*) AS n, sum(amount) AS s FROM ` + sub("v_filter") + ` WHERE amount > 0 GROUP BY kind ORDER BY kind`},
	{name: "last_minutes", ordered: true, views: []string{"v_minute"},
		streamdb: `SELECT minute, n, users FROM v_minute WHERE n > 3 ORDER BY minute DESC LIMIT 3`,
		postgres: `SELECT minute, n, users FROM ` + sub("v_minute") + ` WHERE n > 3 ORDER BY minute DESC LIMIT 3`},
	{name: "band_totals", ordered: true, views: []string{"v_band"},
		streamdb: `SELECT band, sum(n) AS n, sum(revenue) AS revenue FROM v_band GROUP BY band ORDER BY band`,
		postgres: `SELECT band, sum(n) AS n, sum(revenue) AS revenue FROM ` + sub("v_band") + ` GROUP BY band ORDER BY band`},
	{name: "proj_null_mod", views: []string{"v_proj"},
		streamdb: `SELECT count(*) AS n, count(a_mod_q) AS nm, sum(a_times_q) AS st, min(a_div_q) AS mind FROM v_proj WHERE a_mod_q IS NULL OR a_mod_q < 0`,
		postgres: `SELECT count(*) AS n, count(a_mod_q) AS nm, sum(a_times_q) AS st, min(a_div_q) AS mind FROM ` + sub("v_proj") + ` WHERE a_mod_q IS NULL OR a_mod_q < 0`},
	{name: "tags_page", ordered: true, views: []string{"v_tag_stats"},
		streamdb: `SELECT tag, n, du FROM v_tag_stats ORDER BY n DESC, tag LIMIT 5 OFFSET 2`,
		postgres: `SELECT tag, n, du FROM ` + sub("v_tag_stats") + ` ORDER BY n DESC, tag LIMIT 5 OFFSET 2`},
	{name: "global_passthrough", views: []string{"v_global"}, floatCols: []string{"sp", "ap"},
		streamdb: `SELECT * FROM v_global`,
		postgres: `SELECT * FROM ` + sub("v_global")},
	{name: "expr_keys_top", ordered: true, views: []string{"v_expr_keys"},
		streamdb: `SELECT k, m3, q10, n FROM v_expr_keys WHERE k <> '?' ORDER BY n DESC, k, m3, q10 LIMIT 6`,
		postgres: `SELECT k, m3, q10, n FROM ` + sub("v_expr_keys") + ` WHERE k <> '?' ORDER BY n DESC, k, m3, q10 LIMIT 6`},
}
