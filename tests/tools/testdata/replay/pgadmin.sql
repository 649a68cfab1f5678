-- pgAdmin 4's dashboard: the session counts, from
-- web/pgadmin/dashboard/templates/dashboard/sql/default/session_stats.sql
-- (pgadmin-org/pgadmin4 at 4dc9fb14), for the whole server (no database
-- filter). PostgreSQL lists its background processes in pg_stat_activity
-- too, so only the columns are compared ("-- compare: columns").
-- Not here yet: the activity table (activity.sql), which needs to_char and
-- pg_blocking_pids.

-- compare: columns
/*pga4dash*/
SELECT
   (SELECT count(*) FROM pg_stat_activity) AS "Total",
   (SELECT count(*) FROM pg_stat_activity WHERE state = 'active')  AS "Active",
   (SELECT count(*) FROM pg_stat_activity WHERE state = 'idle')  AS "Idle"
