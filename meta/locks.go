package meta

// The lock order of the server, written once: a goroutine holding one of
// these locks takes only locks further down the list. The first three
// and catMu are fields of sql.Engine, which hands the ones meta's services
// take to them (DDL, Purger and DroppedStreams get ddlMu; DDL gets
// stateMu); every unlock is deferred.
//
//  1. ddlMu: a whole catalog change. Held by DDL (CREATE, DROP, ALTER,
//     REFRESH of an unpopulated view, CREATE and DROP SOURCE and SINK;
//     DDL's methods say which they take and which want it held), ROLLBACK
//     TO, ALTER STREAM ... POSITION, a purge of changelogs (Purger) and
//     the collection of dropped streams (DroppedStreams). Code that may
//     run under stateMu only TryLocks it: a read that finds a view's
//     backfill done clears its populating flag (DDL.PopulatingProgress).
//  2. stateMu: exclusive while ROLLBACK TO or ALTER MATERIALIZED VIEW
//     replaces state (DDL.SwapView; always under ddlMu); shared by reads
//     and by table commits.
//  3. The checkpoint coordinator's Exclusive (Coordinator), taken under
//     stateMu, also by Node.ReplaceState, which ROLLBACK TO calls there.
//  4. The tables' changelog locks (TableLog.Lock of several tables in
//     table id order, then TableLog.imu).
//  5. catMu, the live catalog (sql's objs, which DDL changes through
//     LiveCatalog after each write of the stored one).
//  6. Leaves, held without taking any lock above: sql's ackMu and the
//     registries' own mutexes (backends, advisory locks, the PostgreSQL
//     sources' appliers and their change queues); meta's Roles.mu,
//     Sequences.mu (a sequence's own lock is taken after it is released),
//     Jobs.mu, the open points' lock (Points), DroppedStreams' and
//     Purger's registries; and the node's settings lock cfgMu (Node's
//     Setting, CheckpointSettings, ChangeSetting), under which
//     ChangeSetting applies a setting to the runtime and the broker, whose
//     internal locks come after it, and which the coordinator takes
//     through CheckpointSettings.
//
// Catalog, Sinks, State and Streams take no lock: their writers hold
// ddlMu (State's readers stateMu). Load runs at start alone, or under
// ddlMu with stateMu and the coordinator's Exclusive when ROLLBACK TO, a
// rename or an ALTER reloads the catalog; the functions it is given take
// catMu.
