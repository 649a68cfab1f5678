package sql

import (
	"context"
	"errors"
	"strings"
	"time"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// streamOptions are the WITH options CREATE STREAM accepts.
var streamOptions = map[string]bool{"subject": true, "format": true, "connector": true, optHistory: true, optRetention: true, catalog.OptWholeMessage: true,
	optSchemaFile: true, optSchema: true, optMessage: true}

func (e *Engine) createSource(ctx context.Context, n *front.CreateSource) (string, error) {
	return e.createSourceFor(ctx, n, "")
}

// createSourceFor creates a stream or table; mirror names the PostgreSQL
// source whose mirrored table it is ("" for none).
func (e *Engine) createSourceFor(ctx context.Context, n *front.CreateSource, mirror string) (string, error) {
	tag := "CREATE STREAM"
	isTable := n.Kind == front.KindTable && !n.AppendOnly
	if n.Kind == front.KindTable {
		tag = "CREATE TABLE"
	}
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "schema %q does not exist; streamdb has only the public schema", n.Schema)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if e.relationExists(n.Name) {
		if n.IfNotExists {
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
	}
	// Every check comes before anything is created: a failed CREATE
	// leaves neither a catalog entry nor a JetStream stream behind.
	d, err := sourceDescriptor(n, isTable)
	if err != nil {
		return "", err
	}
	d.Mirror = mirror
	if err := e.loadFormatSchema(d); err != nil {
		return "", err
	}
	if d.Constraints, err = e.constraintDefs(n, d); err != nil {
		return "", err
	}
	d.Indexes, _ = constraintIndexes(d)
	var seqs []*catalog.Descriptor
	if isTable {
		if seqs, err = e.columnSequences(n, d); err != nil {
			return "", err
		}
	}
	var sharing []string
	if !isTable {
		sharing = e.streamsOnSubject(d.Subject)
	}
	p := meta.SourcePlan{Object: d, Table: isTable, DefaultSubject: n.Options["subject"] == "", Sequences: seqs}
	if err := e.ddl.CreateSource(ctx, p); err != nil {
		return "", err
	}
	subject, envelope := d.Subject, d.Envelope() != ""
	e.log.Info("created stream", "stream", n.Name, "subject", subject, "jetstream", d.JSStream)
	sharedSubjectNotice(ctx, n.Name, subject, sharing)
	if !isTable && !envelope {
		e.checkStreamFields(ctx, d)
	}
	err = e.ddlCheckpoint(ctx)
	e.startDroppedStreamGC() // leftovers of an earlier run, once
	return tag, err
}

// sourceDescriptor checks a CREATE STREAM or CREATE TABLE statement and
// builds its catalog entry, without touching NATS or the catalog: the
// JetStream stream, the table's kind and start, and the id come later.
func sourceDescriptor(n *front.CreateSource, isTable bool) (*catalog.Descriptor, error) {
	for k := range n.Options {
		if !streamOptions[k] {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized stream option %q", k).
				WithHint("Valid options are subject, format, retention (streams), history (tables), and schema_file, schema and message (formats protobuf and avro).")
		}
	}
	if err := checkRetentionOptions(n.Options, isTable); err != nil {
		return nil, err
	}
	subject := n.Options["subject"]
	if subject == "" {
		subject = n.Name
		if isTable {
			subject = tableSubjectPrefix + n.Name
		}
	}
	if err := checkSubject(subject, n.Options, !isTable); err != nil {
		return nil, err
	}
	format := strings.ToLower(n.Options["format"])
	if format == "" {
		format = "json"
	}
	if len(n.Columns) == 0 && !isTable {
		return nil, sqlerr.New(sqlerr.SyntaxError, "a stream needs at least one column")
	}
	cols := make([]types.Column, len(n.Columns))
	seen := map[string]bool{}
	for i, c := range n.Columns {
		if seen[c.Name] {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name)
		}
		seen[c.Name] = true
		_, mod, err := types.ParseWithModifier(c.TypeName)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "column %q: %v", c.Name, err)
		}
		cols[i] = types.Column{Name: c.Name, Type: c.Type, Mod: mod}
	}
	incCols, incMeta, err := includeColumns(n, isTable)
	if err != nil {
		return nil, err
	}
	cols = append(cols, incCols...)
	d := &catalog.Descriptor{
		Name: n.Name, Kind: catalog.KindStream, Columns: catalog.ColumnsFrom(cols), CreatedAt: time.Now().UTC(),
		Subject: subject, Format: format, Options: n.Options, PrimaryKey: n.PrimaryKey,
	}
	for i, m := range incMeta {
		d.Columns[len(n.Columns)+i].Metadata = m
	}
	if err := checkWholeMessage(n, isTable, d); err != nil {
		return nil, err
	}
	if err := checkEnvelope(n, isTable, d); err != nil {
		return nil, err
	}
	if err := checkCSV(n, isTable, d); err != nil {
		return nil, err
	}
	if err := checkFormatOptions(n, isTable, d); err != nil {
		return nil, err
	}
	if n.Watermark != nil {
		if isTable {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "WATERMARK on a table is not supported").
				WithHint("Declare event-time watermarks on streams (CREATE STREAM or CREATE TABLE ... APPEND ONLY).")
		}
		d.Watermark = n.Watermark.Column + " AS " + n.Watermark.ExprText
		if _, err := binder.BindWatermark(d, cols); err != nil {
			return nil, err
		}
	}
	if err := checkGeneratedColumns(n, d, cols); err != nil {
		return nil, err
	}
	if isTable {
		for i, c := range n.Columns {
			d.Columns[i].NotNull = c.NotNull
			if c.Default != nil {
				d.Columns[i].Default = storedDefault(c.DefaultText, c.TypeName)
			}
		}
	}
	return d, nil
}

// persist allocates an id for d, writes it durably and adds it to the
// in-memory catalog (meta.DDL.Create).
func (e *Engine) persist(d *catalog.Descriptor) error { return e.ddl.Create(d) }

// createView runs CREATE MATERIALIZED VIEW n; bind binds its query,
// under ddlMu.
func (e *Engine) createView(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement, bind func() (plan.Node, error)) (string, error) {
	const tag = "CREATE MATERIALIZED VIEW"
	if n.Schema != "" && n.Schema != "public" {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "schema %q does not exist; streamdb has only the public schema", n.Schema)
	}
	if n.NoData {
		return e.createUnpopulatedView(ctx, n, st, bind)
	}
	d, root, err := e.installView(ctx, n, st, nil, bind)
	if err != nil {
		return "", err
	}
	if d == nil {
		return tag, nil // IF NOT EXISTS, and it does
	}
	return tag, e.backfillView(ctx, d, root, e.ddl.AbandonView)
}

// backfillView checkpoints the catalog with new view d (installView's)
// and waits for its backfill (meta.DDL.Backfill), then notices what the
// backfill skipped and what the view's columns will never see. If the
// statement fails on the way, abandon undoes the view.
func (e *Engine) backfillView(ctx context.Context, d *catalog.Descriptor, root plan.Node, abandon func(context.Context, *catalog.Descriptor)) error {
	backfilled, err := e.ddl.Backfill(ctx, d, abandon)
	if err != nil || !backfilled {
		return err
	}
	e.backfillErrorsNotice(ctx, d)
	noticed := map[string]bool{}
	for _, name := range d.DependsOn {
		if src, ok := e.lookup(name); ok {
			noticed[name] = e.checkStreamFields(ctx, src)
		}
	}
	e.checkViewColumns(ctx, d, root, noticed)
	return nil
}

// installView binds the query of CREATE MATERIALIZED VIEW n with bind,
// stores the view (marked populating) and starts its dataflow, all under
// ddlMu, and returns the view with its bound plan. It returns nil and no
// error when the name is taken and IF NOT EXISTS says to do nothing. With
// unpopulated view u (REFRESH of a view created WITH NO DATA), the view
// replaces u.
func (e *Engine) installView(ctx context.Context, n *front.CreateMaterializedView, st *front.Statement, u *catalog.Descriptor, bind func() (plan.Node, error)) (*catalog.Descriptor, plan.Node, error) {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	if u != nil {
		if cur, ok := e.lookup(u.Name); !ok || cur.ID != u.ID || cur.Kind != catalog.KindUnpopulatedView {
			return nil, nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q was changed by another session during REFRESH", u.Name).
				WithHint("Run REFRESH MATERIALIZED VIEW %s again.", u.Name)
		}
	} else if e.relationExists(n.Name) {
		if n.IfNotExists {
			return nil, nil, nil
		}
		return nil, nil, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
	}
	opts, err := checkViewOptions(n.Options)
	if err != nil {
		return nil, nil, err
	}
	root, err := bind()
	if err != nil {
		return nil, nil, err
	}
	if err := binder.CheckStreamable(root); err != nil {
		return nil, nil, err
	}
	d, err := viewDescriptor(n, root, opts)
	if err != nil {
		return nil, nil, err
	}
	d.DependsOn = e.plainViewsNamed(d.DependsOn, st, n.Query)
	e.recordPlan(d, root)
	if err := e.ddl.InstallView(ctx, d, root, u); err != nil {
		return nil, nil, err
	}
	return d, root, nil
}

// waitLogged waits for views to reach targets, reporting progress every
// execution.progress.interval while it takes long.
func (e *Engine) waitLogged(ctx context.Context, ids []uint32, targets map[string]uint64, what string) error {
	job := e.startJob(what, ids, targets)
	defer e.endJob(job)
	return e.waitWithProgress(ctx, targets, what, job, func(ctx context.Context) error { return e.rt.WaitFor(ctx, ids, targets) })
}

// waitWithProgress runs wait, reporting job's progress (or the targets,
// without a job) every execution.progress.interval while it takes long,
// and turns its error into what the client sees.
func (e *Engine) waitWithProgress(ctx context.Context, targets map[string]uint64, what string, job *progressJob, wait func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- wait(ctx) }()
	tick := time.NewTicker(e.progressInterval())
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil && ctx.Err() != nil {
				return sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
			}
			var se *sqlerr.Error
			if errors.As(err, &se) {
				return se // a stopped view's error (exec.Runtime.ViewFailure) keeps its SQLSTATE
			}
			if err != nil {
				return sqlerr.New(sqlerr.InternalError, "%v", err)
			}
			return nil
		case <-tick.C:
			e.reportProgress(ctx, what, job, targets)
		}
	}
}

// viewDescriptor builds a new view's catalog entry from its bound plan:
// its columns (renamed by the statement's column list, if any), the
// relations it reads and its options. It touches neither state nor the
// catalog; the id comes with persist.
func viewDescriptor(n *front.CreateMaterializedView, root plan.Node, opts map[string]string) (*catalog.Descriptor, error) {
	cols := root.Schema()
	if len(n.Columns) > 0 {
		if len(n.Columns) > len(cols) {
			return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE MATERIALIZED VIEW specifies more column names than columns")
		}
		cols = append([]types.Column(nil), cols...)
		for i, name := range n.Columns {
			cols[i].Name = name
		}
	}
	seen := map[string]bool{}
	for _, c := range cols {
		if seen[c.Name] {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name).
				WithHint("Give the columns distinct names with AS.")
		}
		seen[c.Name] = true
	}
	var deps []string
	for _, src := range plan.Sources(root) {
		deps = append(deps, src.Name)
	}
	d := &catalog.Descriptor{
		Name: n.Name, Kind: catalog.KindView, Columns: catalog.ColumnsFrom(cols), CreatedAt: time.Now().UTC(),
		Query: n.QueryText, DependsOn: deps, Dataflow: catalog.DataflowLatest, VNodes: catalog.DefaultVNodes,
	}
	if len(opts) > 0 {
		d.Options = opts
	}
	return d, nil
}

func (e *Engine) drop(ctx context.Context, n *front.Drop) (string, error) {
	// DROP SOURCE of a stream names what the statement names.
	kindWord := string(n.Kind)
	if n.Source {
		kindWord = "source"
	}
	tag := "DROP " + strings.ToUpper(kindWord)
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	defer e.startDroppedStreamGC()
	want := map[front.ObjectKind]catalog.ObjectKind{
		front.KindStream: catalog.KindStream, front.KindTable: catalog.KindTable,
		front.KindMaterializedView: catalog.KindView, front.KindView: catalog.KindPlainView,
		front.KindSequence: catalog.KindSequence,
	}[n.Kind]
	var cascaded []string
	for _, name := range n.Names {
		d, ok := e.lookup(name)
		if !ok {
			if n.IfExists {
				continue
			}
			return "", sqlerr.New(sqlerr.UndefinedTable, "%s %q does not exist", kindWord, name)
		}
		kind := d.Kind
		if kind == catalog.KindUnpopulatedView {
			kind = catalog.KindView
		}
		if kind != want && !(want == catalog.KindTable && kind == catalog.KindStream) && !(want == catalog.KindStream && d.Envelope() != "") {
			return "", sqlerr.New(sqlerr.WrongObjectType, "%q is a %s, not a %s", name, kind, kindWord).
				WithHint("Use DROP %s.", strings.ToUpper(string(kind)))
		}
		if d.Kind == catalog.KindSequence {
			if err := e.checkDropSequence(d); err != nil {
				return "", err
			}
		}
		if d.Mirror != "" && !n.Source {
			return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop table %s because source %s mirrors it", name, d.Mirror).
				WithHint("DROP SOURCE %s drops it with the source's other tables.", d.Mirror)
		}
		deps := e.dependents(name)
		if len(deps) > 0 && !n.Cascade {
			names := make([]string, len(deps))
			for i, dep := range deps {
				names[i] = relKindWord(dep) + " " + dep.Name
			}
			return "", withDetail(sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop %s %s because other objects depend on it", kind, name).
				WithHint("%s depends on it; use DROP ... CASCADE to drop them too.", strings.Join(names, ", ")),
				"%s depends on %s %s", names[len(names)-1], relKindWord(d), name)
		}
		fkLines, err := e.dropForeignKeysTo(d, n.Names, n.Cascade)
		if err != nil {
			return "", err
		}
		cascaded = append(cascaded, fkLines...)
		sinks, err := e.sinksOn(append(deps, d))
		if err != nil {
			return "", err
		}
		if len(sinks) > 0 && !n.Cascade {
			names := make([]string, len(sinks))
			for i, s := range sinks {
				names[i] = s.Name
			}
			return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot drop %s %s because other objects depend on it", d.Kind, name).
				WithHint("sink %s depends on it; DROP SINK first, or use DROP ... CASCADE to drop them too.", strings.Join(names, ", "))
		}
		cascaded = append(cascaded, cascadeLines(name, deps, sinks)...)
		if err := e.ddl.DropCascade(meta.DropPlan{Object: d, Dependents: deps, Sinks: sinks, Owned: e.ownedSequences(d)}); err != nil {
			return "", err
		}
	}
	cascadeNotice(ctx, cascaded)
	err := e.ddlCheckpoint(ctx)
	e.collectDroppedStreamsLocked()
	return tag, err
}

// ddlCheckpoint captures a catalog change in a checkpoint before the DDL
// statement returns (meta.DDL.Checkpoint).
func (e *Engine) ddlCheckpoint(ctx context.Context) error { return e.ddl.Checkpoint(ctx) }

// dependents returns every object that reads name, directly or through
// other views, dependents first.
func (e *Engine) dependents(name string) []*catalog.Descriptor {
	e.catMu.RLock()
	defer e.catMu.RUnlock()
	var out []*catalog.Descriptor
	seen := map[string]bool{}
	var visit func(string)
	visit = func(n string) {
		for _, d := range e.objs {
			if seen[d.Name] {
				continue
			}
			for _, dep := range d.DependsOn {
				if dep == n {
					seen[d.Name] = true
					visit(d.Name)
					out = append(out, d)
					break
				}
			}
		}
	}
	visit(name)
	return out
}

// dropObject stops a view's pipeline and deletes the object and its
// state (meta.DDL.Drop).
func (e *Engine) dropObject(d *catalog.Descriptor) error { return e.ddl.Drop(d) }

// flush waits until every running view has consumed everything published
// to its sources before the call. Views that stopped (before or during the
// wait) are left out, so that one failed view does not fail every
// session's FLUSH: reading such a view fails with its cause instead.
func (e *Engine) flush(ctx context.Context) error {
	targets, err := e.rt.Targets(ctx, nil)
	if err != nil {
		return err
	}
	var failed []string
	err = e.waitWithProgress(ctx, targets, "FLUSH", nil, func(ctx context.Context) error {
		var err error
		failed, err = e.rt.WaitForRunning(ctx, targets)
		return err
	})
	if err == nil && len(failed) > 0 {
		e.log.Warn("FLUSH left out stopped materialized views", "views", strings.Join(failed, ", "))
	}
	return err
}

// explainStreaming renders a view's streaming dataflow.
func (e *Engine) explainStreaming(root plan.Node) string {
	return exec.ExplainStreaming(root)
}

// initPositions starts a new view's (or table's) sources at the oldest
// message each JetStream stream still retains (meta.DDL.InitPositions).
func (e *Engine) initPositions(ctx context.Context, d *catalog.Descriptor, root plan.Node) error {
	return e.ddl.InitPositions(ctx, d, root)
}
