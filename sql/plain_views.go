package sql

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/binder"
	"streamdb/catalog"
	"streamdb/front"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Plain views (CREATE [OR REPLACE] VIEW). A view is a catalog entry
// (catalog.KindPlainView) holding its query's text, its columns and the
// relations the query names (DependsOn); it keeps no state and runs no
// dataflow. Every query that reads it parses and binds the stored text
// again in its place (binder.BindPlainViewQuery, binder/plain_views.go), against the same
// catalog as the rest of the query, so a materialized view over a view
// is built from the view's query and its plan records the relations
// underneath. The view's stored columns are its interface: binding the
// text must give at least those columns with those types (extra columns
// after them, from a * over a view that OR REPLACE extended, are cut off,
// as PostgreSQL's stored * expansion would not see them).
//
// Like PostgreSQL, the relations a view reads are checked with the
// privileges of the view's owner (views are security definer), and the
// reader needs SELECT on the view only (needViewInputs).

// createPlainView runs CREATE [OR REPLACE] VIEW.
func (e *Engine) createPlainView(ctx context.Context, n *front.CreateView, st *front.Statement) (string, error) {
	const tag = "CREATE VIEW"
	if n.Schema != "" && n.Schema != "public" {
		return "", noSuchSchema(n.Schema)
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	old, exists := e.lookup(n.Name)
	if exists && !n.OrReplace {
		if n.IfNotExists {
			pgwire.Notice(ctx, fmt.Sprintf("relation %q already exists, skipping", n.Name), "")
			return tag, nil
		}
		return "", sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", n.Name)
	}
	if exists && old.Kind != catalog.KindPlainView {
		return "", sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", n.Name).
			WithHint("%s is a %s; choose another name for the view.", n.Name, old.Kind)
	}
	d, err := e.plainViewDescriptor(n, st)
	if err != nil {
		return "", err
	}
	if !exists {
		if err := e.persist(d); err != nil {
			return "", err
		}
		e.log.Info("created view", "view", d.Name)
		return tag, e.ddlCheckpoint(ctx)
	}
	if err := checkReplaceColumns(old.Columns, d.Columns); err != nil {
		return "", err
	}
	if e.readsThrough(d, old.Name) {
		return "", sqlerr.New(sqlerr.InvalidObjectDefinition, "infinite recursion detected in rules for relation %q", n.Name).
			WithHint("A view cannot read itself, directly or through other views.")
	}
	for _, dep := range e.dependents(old.Name) {
		if dep.Kind == catalog.KindView && len(dep.Plan) == 0 {
			return "", sqlerr.New(sqlerr.DependentObjectsExist, "cannot replace view %s because materialized view %s reads it", n.Name, dep.Name).
				WithHint("%s has no recorded plan and would read the new query on restart: drop it first, replace the view, then create it again.", dep.Name)
		}
	}
	// The same object: it keeps its id (pg_class oid), creation time (its
	// owner and grants) and comments.
	d.ID, d.CreatedAt, d.Comment = old.ID, old.CreatedAt, old.Comment
	for i := range old.Columns {
		d.Columns[i].Comment = old.Columns[i].Comment
	}
	if err := e.replaceDescriptor(old, d); err != nil {
		return "", err
	}
	e.log.Info("replaced view", "view", d.Name)
	return tag, e.ddlCheckpoint(ctx)
}

// plainViewDescriptor binds a CREATE VIEW's query as it will be expanded
// (from its text) and builds the view's catalog entry. The id comes
// with persist.
func (e *Engine) plainViewDescriptor(n *front.CreateView, st *front.Statement) (*catalog.Descriptor, error) {
	if st.NumParams > 0 {
		return nil, sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $1").
			WithHint("A view's query cannot have parameters; write the values into the query.")
	}
	if st.AsOf != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a view cannot read AS OF a point").
			WithHint("Query AS OF the point ad hoc, or create the view without AS OF and read it AS OF the point.")
	}
	vst, root, err := binder.BindPlainViewQuery(bindCatalog{e}, n.QueryText)
	if err != nil {
		return nil, atQueryText(err, st.Text, n.QueryText)
	}
	cols := append([]types.Column(nil), root.Schema()...)
	if len(n.Columns) > len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	for i, name := range n.Columns {
		cols[i].Name = name
	}
	seen := map[string]bool{}
	for i, c := range cols {
		if seen[c.Name] {
			return nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", c.Name).
				WithHint("Give the columns distinct names with AS, or list them after the view's name.")
		}
		seen[c.Name] = true
		if c.Type == types.Unknown {
			// PostgreSQL resolves a view's untyped literals to text.
			cols[i].Type, cols[i].Mod = types.Text, types.Modifier{}
		}
	}
	return &catalog.Descriptor{
		Name: n.Name, Kind: catalog.KindPlainView, Columns: catalog.ColumnsFrom(cols), CreatedAt: time.Now().UTC(),
		Query: n.QueryText, DependsOn: e.relationsNamed(vst, nil),
	}, nil
}

// atQueryText moves an error's position in a CREATE VIEW's query text to
// its place in the whole statement.
func atQueryText(err error, stmt, query string) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Position == 0 {
		return err
	}
	if i := strings.Index(stmt, query); i >= 0 {
		se.Position += utf8.RuneCountInString(stmt[:i])
	}
	return err
}

// relationsNamed lists the catalog objects a statement's query names, by
// name, sorted: tables, streams, materialized views and views, and the
// sources of its TUMBLE / HOP windows. WITH query names and system
// tables are left out. node is the query to look in (st.Node if nil).
func (e *Engine) relationsNamed(st *front.Statement, node ast.Node) []string {
	if node == nil {
		node, _ = st.Node.(ast.Node)
	}
	var names []string
	if node != nil {
		c := &tableCollector{ctes: map[string]bool{}}
		node.Accept(c)
		for _, tn := range c.names {
			if s := tn.Schema.O; s != "" && s != "public" || c.ctes[tn.Name.O] && tn.Schema.O == "" {
				continue
			}
			if _, ok := st.Windows[tn.Name.O]; ok && tn.Schema.O == "" {
				continue
			}
			names = append(names, tn.Name.O)
		}
	}
	for _, w := range st.Windows {
		if w.Schema == "" || w.Schema == "public" {
			names = append(names, w.Source)
		}
	}
	sort.Strings(names)
	var out []string
	for i, name := range names {
		if i > 0 && names[i-1] == name {
			continue
		}
		if _, ok := e.lookup(name); ok {
			out = append(out, name)
		}
	}
	return out
}

// plainViewsNamed returns deps (the relations a materialized view's plan
// reads) with the other relations that query names added, so that DROP
// sees each, as PostgreSQL's dependencies do: the (plain) views, whose
// plan records the relations under the view, and the relations of a part
// of the query that reads nothing (a LIMIT of zero rows,
// binder.BindView).
func (e *Engine) plainViewsNamed(deps []string, st *front.Statement, query ast.Node) []string {
	for _, name := range e.relationsNamed(st, query) {
		if !containsString(deps, name) {
			deps = append(deps, name)
		}
	}
	return deps
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readsThrough reports whether d reads the relation name, directly or
// through the views it reads.
func (e *Engine) readsThrough(d *catalog.Descriptor, name string) bool {
	seen := map[string]bool{}
	var visit func(deps []string) bool
	visit = func(deps []string) bool {
		for _, dep := range deps {
			if dep == name {
				return true
			}
			if seen[dep] {
				continue
			}
			seen[dep] = true
			if in, ok := e.lookup(dep); ok && in.Kind == catalog.KindPlainView && visit(in.DependsOn) {
				return true
			}
		}
		return false
	}
	return visit(d.DependsOn)
}

// checkReplaceColumns is PostgreSQL's rule for CREATE OR REPLACE VIEW: the
// new query keeps every column, by name and type, in its place, and may
// add columns at the end.
func checkReplaceColumns(old, cols []catalog.Column) error {
	if len(cols) < len(old) {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot drop columns from view").
			WithHint("The new query must give the view's %d columns first; DROP VIEW and CREATE VIEW to remove columns.", len(old))
	}
	for i, o := range old {
		c := cols[i]
		if c.Name != o.Name {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change name of view column %q to %q", o.Name, c.Name).
				WithHint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.")
		}
		if c.Type != o.Type {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change data type of view column %q from %s to %s", o.Name, o.Type, c.Type).
				WithHint("Cast the column to %s in the new query, or DROP VIEW and CREATE VIEW.", o.Type)
		}
	}
	return nil
}

// replaceDescriptor writes d in place of old (the same object: same id,
// possibly another name) durably (meta.Catalog.Replace) and in the live
// catalog. It suits changes that touch no running dataflow: views,
// comments, storage options, a sequence's options. The caller holds ddlMu.
func (e *Engine) replaceDescriptor(old, d *catalog.Descriptor) error {
	if err := e.cat.Replace(old, d); err != nil {
		return err
	}
	liveCatalog{e}.rename(old, d)
	return nil
}

// noSuchSchema is the error for a schema other than public.
func noSuchSchema(name string) error {
	return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", name).
		WithHint("streamdb has the schema public only: leave the schema out of the name.")
}

// renamePlainView is ALTER VIEW / ALTER TABLE ... RENAME TO of a view:
// only its catalog entry changes. The caller holds ddlMu and has checked
// that the new name is free and that nothing reads the view.
func (e *Engine) renamePlainView(old *catalog.Descriptor, newName string) error {
	d := *old
	d.Name = newName
	if err := e.roles.CopyPrivileges(old, &d); err != nil {
		return err
	}
	return e.replaceDescriptor(old, &d)
}

// needViewInputs checks, for a reader allowed to SELECT view d, that d's
// owner may read what d reads (through views, each with its own
// owner's privileges), as PostgreSQL checks a view's relations.
func (s *session) needViewInputs(d *catalog.Descriptor, depth int) error {
	if d.Kind != catalog.KindPlainView || depth > 64 {
		return nil
	}
	owner := s.e.roles.Owner(d)
	if r := s.e.roles.Role(owner); owner == BootstrapUser || r != nil && r.Superuser {
		return nil
	}
	for _, name := range d.DependsOn {
		in, ok := s.e.lookup(name)
		if !ok {
			continue
		}
		if s.e.roles.Owner(in) != owner && !s.e.roles.Granted(in, owner, "SELECT") {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(in), in.Name).
				WithHint("View %s reads %s with the privileges of its owner %s: GRANT SELECT ON %s TO %s.", d.Name, in.Name, owner, in.Name, owner)
		}
		if err := s.needViewInputs(in, depth+1); err != nil {
			return err
		}
	}
	return nil
}
