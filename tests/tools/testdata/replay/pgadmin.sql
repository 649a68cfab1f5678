-- pgAdmin 4's dashboard: the session counts and the server activity table,
-- from web/pgadmin/dashboard/templates/dashboard/sql/default/session_stats.sql
-- (pgadmin-org/pgadmin4 at 4dc9fb14) and activity.sql (at 41b68417), for the
-- whole server (no database filter). PostgreSQL lists its background
-- processes in pg_stat_activity too, so only the columns are compared
-- ("-- compare: columns").

-- compare: columns
/*pga4dash*/
SELECT
   (SELECT count(*) FROM pg_stat_activity) AS "Total",
   (SELECT count(*) FROM pg_stat_activity WHERE state = 'active')  AS "Active",
   (SELECT count(*) FROM pg_stat_activity WHERE state = 'idle')  AS "Idle"

-- compare: columns
/*pga4dash*/
SELECT
    pid,
    datname,
    usename,
    application_name,
    client_addr,
    pg_catalog.to_char(backend_start, 'YYYY-MM-DD HH24:MI:SS TZ') AS backend_start,
    state,
    wait_event_type || ': ' || wait_event AS wait_event,
    array_to_string(pg_catalog.pg_blocking_pids(pid), ', ') AS blocking_pids,
    query,
    pg_catalog.to_char(state_change, 'YYYY-MM-DD HH24:MI:SS TZ') AS state_change,
    pg_catalog.to_char(query_start, 'YYYY-MM-DD HH24:MI:SS TZ') AS query_start,
    pg_catalog.to_char(xact_start, 'YYYY-MM-DD HH24:MI:SS TZ') AS xact_start,
    backend_type,
    CASE WHEN state = 'active' THEN ROUND((extract(epoch from now() - query_start) / 60)::numeric, 2) ELSE 0 END AS active_since
FROM
    pg_catalog.pg_stat_activity
ORDER BY pid
