// Package meta is the catalog service: it is becoming the only writer of
// the catalog and of the durable objects beside it, each behind a small
// typed API that the SQL frontend (package sql) calls. sql parses, binds
// and checks privileges; meta keeps what must last and says what it is.
//
// What it owns so far:
//   - The catalog (catalog.go, catalog_batch.go, catalog_load.go,
//     catalog_format.go): the descriptors of streams, tables, views,
//     sequences, sources and secrets as stored in Pebble, with the object
//     id counter and the directory's state format. Catalog is their only
//     writer (tests/arch checks it): Create, Put, Replace, Amend and Drop
//     each commit one batch; NewIDIn, PutIn and DeleteIn write into a
//     batch that commits with state. Load reads the catalog and starts
//     it: formats checked, the live catalog installed in id order, views
//     moved to newer formats, streams bound to JetStream, tables and
//     views started in id order, through functions sql passes in
//     (CatalogLoad, the binder among them). The live catalog itself is
//     sql's, updated after each write.
//   - Roles (roles.go): users, their passwords' SCRAM verifiers, the
//     owners of objects and the privileges granted on them, kept in the
//     data directory's roles file outside the Pebble state (ROLLBACK TO
//     leaves them alone) and, in an --ha-group, in the group's replica
//     (RoleReplica), stored only while this server holds the lease.
//   - Sequences (sequences.go): the values of sequences, reserved in
//     blocks by records in a JetStream stream before they are handed out,
//     so that neither a crash nor ROLLBACK TO hands a value out twice.
//     The sequences' definitions are catalog descriptors (Catalog).
//   - Jobs (progress.go): the long waits whose progress the server
//     reports (a view's backfill, the replay after a start or a
//     rollback) and the data behind streamdb_progress, measured from the
//     runtime's committed source positions.
//   - Retention (retention.go, purge.go): what JetStream keeps of the
//     tables' changelogs (the history and retention options) and the
//     purge after each checkpoint, which never removes what a retained
//     checkpoint or savepoint, a replaying table or AS OF still needs.
//   - Dropped streams (dropped_streams.go): the JetStream streams of
//     dropped tables, deleted once no retained point holds them, and the
//     server's owner id file.
//   - Points (points.go, restore_check.go): checkpoints and savepoints
//     taken, released, listed and resolved for ROLLBACK TO, AS OF and
//     SUBSCRIBE ... AS OF EPOCH (fetched from a bucket where needed),
//     the checks of a point's source positions before a rollback, and
//     the cache of opened points.
//   - The node (node.go, checkpoints.go): Node holds the opened
//     *node.Node and is all the frontend sees of it: the components, the
//     settings, the checkpoint coordinator as Coordinator, the
//     checkpoints that CHECKPOINT, DDL and ROLLBACK TO take and SHOW
//     CHECKPOINTS' rows, the sinks' publishing status, and ROLLBACK TO's
//     swap of the live state, the sinks' outboxes carried across it.
//   - Sinks (sinks.go, sinks_rollback.go): the sinks' descriptors,
//     stored beside their outboxes in Pebble: created with the JetStream
//     stream of their subject, listed, found by name or by the view they
//     read, deleted with their outbox, and the outboxes' lag behind
//     JetStream; the runtime is told which views write which outbox
//     (SinkRuntime); SHOW SINKS' rows (sinks_show.go) and the subjects a
//     sink may not take. Across a ROLLBACK TO the outboxes are carried over
//     with the changes that take each view's consumers to the point.
//   - PostgreSQL sources (pgsource*.go): CREATE SOURCE ... FROM POSTGRES
//     once sql has bound it (the mirrored tables, the replication slot,
//     the copy of the tables as of its snapshot, the source's descriptor
//     last, all undone on a failure), DROP SOURCE, the tables of a CREATE
//     SOURCE a crash interrupted, and one applier per source that applies
//     its transactions whole with the position they reach, follows its
//     tables' column changes and fills added columns; and the rows of
//     streamdb_sources. The live catalog, the secrets and the table write
//     path are sql's, asked through PGSourceHost.
//   - Streams (streams.go): what the frontend asks of the JetStream
//     streams behind streams and tables, each named by its descriptor:
//     the sequences they hold, their messages read back in a range, the
//     stream holding a subject, the binding of a new stream or table,
//     subject patterns, and the checks and SQLSTATEs of a publish that
//     failed. It takes no lock.
//   - State (state.go, state_sizes.go, view_rewrite.go): the committed
//     state as the frontend reads and sets it outside the table write
//     path: snapshots, the source positions CREATE and ALTER STREAM ...
//     POSITION store, the sizes of state tables, and ALTER MATERIALIZED
//     VIEW's rewrite of a view's state with its descriptor in one batch.
//     It takes no lock: its callers hold sql's stateMu or ddlMu.
//   - The secret key (secret_key.go): the key file CREATE SECRET values
//     are sealed under, read or made at start.
//   - DDL on bound plans (ddl.go and the files its doc comment names):
//     once sql has bound a statement and built its descriptor, DDL stores
//     or drops it with the live catalog kept in step, starts and stops
//     dataflows, runs a new view's backfill and the populating flag that
//     guards it, maps ALTER MATERIALIZED VIEW's old operator state onto
//     the new plan and swaps it, creates streams and tables (their
//     JetStream streams bound or made, undone on failure), stores
//     sequences' definitions, builds and drops indexes with the
//     dataflows stopped, and checkpoints the change.
//
// What it never imports: sql, front, pgwire or the TiDB parser and
// its AST; sql in turn reaches checkpoint, sink and node only through
// meta. What it needs of statements comes as plain values (a
// RoleChange, a list of privileges); what it needs of the live catalog
// comes as catalog descriptors or as functions sql passes in. Its errors
// are sqlerr errors with the SQLSTATE the client sees.
//
// Lock order: locks.go lists every lock of the server in the order they
// are taken, sql's (ddlMu, stateMu, catMu), meta's and the node's, and
// which code holds each.
package meta
