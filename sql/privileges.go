package sql

import (
	"context"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"streamdb/catalog"
	"streamdb/config"
	"streamdb/front"
	"streamdb/sqlerr"
	"streamdb/types"
)

// Privilege checks. Each statement is checked when it runs (so a REVOKE
// reaches prepared statements too): superusers pass everything; others
// need the privilege on each relation the statement reads or writes (the
// owner of an object holds all of them), CREATE on the database to create
// objects, ownership to drop them, and superuser for the whole-system
// commands (CHECKPOINT, durable savepoints and rollbacks, ALTER SYSTEM,
// ALTER STREAM ... SET POSITION, server settings). The wording is
// PostgreSQL's, with SQLSTATE 42501.

// permitted returns an error when the session's user may not run st.
func (s *session) permitted(st *front.Statement) error {
	if s.roleSuperuser() {
		return nil
	}
	switch n := st.Node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return s.needRead(st, n.(ast.Node))
	case *ast.InsertStmt:
		target := firstTable(n.Table)
		if err := s.needOn(target, "INSERT"); err != nil {
			return err
		}
		if err := s.needReturning(st, target); err != nil {
			return err
		}
		if err := s.needUpsert(st, n, target); err != nil {
			return err
		}
		if n.Select != nil {
			return s.needRead(st, n.Select)
		}
		for _, row := range n.Lists {
			for _, x := range row {
				if err := s.needRead(st, x); err != nil {
					return err
				}
			}
		}
		return nil
	case *ast.UpdateStmt:
		target := firstTable(n.TableRefs)
		if err := s.needOn(target, "UPDATE"); err != nil {
			return err
		}
		reads := n.Where != nil || returningReads(st)
		for _, a := range n.List {
			reads = reads || readsColumns(a.Expr)
		}
		if reads {
			if err := s.needOn(target, "SELECT"); err != nil {
				return err
			}
		}
		return s.needReadExcept(st, n, target)
	case *ast.DeleteStmt:
		target := firstTable(n.TableRefs)
		if err := s.needOn(target, "DELETE"); err != nil {
			return err
		}
		if n.Where != nil || returningReads(st) {
			if err := s.needOn(target, "SELECT"); err != nil {
				return err
			}
		}
		return s.needReadExcept(st, n, target)
	case *front.CreateSource:
		if err := s.needCreate(); err != nil {
			return err
		}
		return s.needSubject(n)
	case *front.CreateMaterializedView:
		if err := s.needCreate(); err != nil {
			return err
		}
		return s.needRead(st, n.Query)
	case *front.CreateView:
		if err := s.needCreate(); err != nil {
			return err
		}
		if d, ok := s.e.lookup(n.Name); ok && n.OrReplace && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
		// As in PostgreSQL, what a plain view reads is checked when it is
		// read, with its owner's privileges (needViewInputs), not here.
		return nil
	case *front.Comment:
		if d, ok := s.e.lookup(n.Name); ok && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
	case *front.CreateIndex:
		if d, ok := s.e.lookup(n.Table); ok && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
	case *front.DropIndex:
		for _, name := range n.Names {
			if d, _, ok := s.e.indexOwner(name); ok && s.e.roles.Owner(d) != s.user {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of index %s", name)
			}
		}
	case *front.CreateSchema, *front.DropSchema:
		if err := s.needCreate(); err != nil {
			return err
		}
	case *front.CreateSequence:
		return s.needCreate()
	case *front.AlterSequence:
		if d, ok := s.e.lookup(n.Name); ok && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
	case *front.CreateSink:
		if err := s.needCreate(); err != nil {
			return err
		}
		if d, ok := s.e.lookup(n.View); ok && !s.has(d, "SELECT") {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name).
				WithHint("A sink publishes the rows of %s: its owner must GRANT SELECT ON %s first.", d.Name, d.Name)
		}
	case *front.DropSink:
		for _, name := range n.Names {
			if d, _ := s.e.sinkNamed(name); d != nil && d.Owner != s.user {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of sink %s", d.Name)
			}
		}
	case *front.CreatePGSource:
		return mustBeSuperuser("create a PostgreSQL source")
	case *front.CreateSecret:
		return s.needCreate()
	case *front.AlterSecret:
		return s.ownSecret(n.Name, "alter")
	case *front.DropSecret:
		for _, name := range n.Names {
			if err := s.ownSecret(name, "drop"); err != nil {
				return err
			}
		}
	case *front.Drop:
		for _, name := range n.Names {
			d, ok := s.e.lookup(name)
			if ok && s.e.roles.Owner(d) != s.user {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
			}
		}
	case *front.Explain:
		if cmv, ok := n.Stmt.Node.(*front.CreateMaterializedView); ok {
			return s.needRead(n.Stmt, cmv.Query)
		}
		return s.permitted(n.Stmt)
	case *front.Checkpoint:
		return mustBeSuperuser("do CHECKPOINT")
	case *front.RestoreViewGroup:
		return mustBeSuperuser("restore a view-group from a checkpoint")
	case *front.Savepoint:
		if s.tx == nil {
			return mustBeSuperuser("create a savepoint of the whole system")
		}
	case *front.ReleaseSavepoint:
		if s.tx == nil {
			return mustBeSuperuser("release a savepoint of the whole system")
		}
	case *front.RollbackTo:
		if n.Kind != front.PointSavepoint || s.tx == nil {
			return mustBeSuperuser("roll the whole system back")
		}
	case *front.AlterSystem:
		return mustBeSuperuser("execute ALTER SYSTEM command")
	case *front.AlterStreamPosition:
		return mustBeSuperuser("move the position of stream " + n.Stream)
	case *front.AlterTableOptions:
		if d, ok := s.e.lookup(n.Table); ok && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
	case *front.Truncate:
		for _, name := range n.Tables {
			if d, ok := s.e.lookup(name); ok && !s.has(d, "TRUNCATE") {
				return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
			}
		}
	case *front.AlterTable:
		if d, ok := s.e.lookup(n.Table); ok && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
	case *front.RenameRelation:
		if d, ok := s.e.lookup(n.Name); ok && s.e.roles.Owner(d) != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindWord(d), d.Name)
		}
	case *front.Set:
		if n.System {
			return mustBeSuperuser("execute ALTER SYSTEM command")
		}
		if config.Known(n.Name) {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to set parameter %q", n.Name).
				WithHint("Server settings apply to the whole server: a superuser sets them.")
		}
	}
	return nil
}

func mustBeSuperuser(what string) error {
	return sqlerr.New(sqlerr.InsufficientPrivilege, "must be superuser to %s", what)
}

// needCreate requires CREATE on the database.
func (s *session) needCreate() error {
	if s.e.roles.MayCreate(s.user) {
		return nil
	}
	db := s.database
	if db == "" {
		db = "streamdb"
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for database %s", db).
		WithHint("A superuser can run GRANT CREATE ON DATABASE %s TO %s.", db, s.user)
}

// needOn requires priv on the relation tn names (nothing when it names no
// relation of the catalog: the statement then fails as it would anyway).
func (s *session) needOn(tn *ast.TableName, priv string) error {
	if tn == nil {
		return nil
	}
	d := s.relation(tn)
	if d == nil || s.has(d, priv) {
		return nil
	}
	return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
}

// has reports whether the session's user holds priv on d.
func (s *session) has(d *catalog.Descriptor, priv string) bool {
	return s.e.roles.Owner(d) == s.user || s.e.roles.Granted(d, s.user, priv)
}

// relation returns the catalog object tn names, or nil (a system table, a
// CTE, a window, a missing name).
func (s *session) relation(tn *ast.TableName) *catalog.Descriptor {
	if sc := tn.Schema.O; sc != "" && sc != "public" {
		return nil
	}
	d, ok := s.e.lookup(tn.Name.O)
	if !ok {
		return nil
	}
	return d
}

// needRead requires SELECT on every relation node reads, including the
// sources of its TUMBLE / HOP windows.
func (s *session) needRead(st *front.Statement, node ast.Node) error {
	return s.needReadExcept(st, node, nil)
}

// needReadExcept is needRead, leaving out the table skip (a DML target,
// checked on its own).
func (s *session) needReadExcept(st *front.Statement, node ast.Node, skip *ast.TableName) error {
	c := &tableCollector{ctes: map[string]bool{}}
	node.Accept(c)
	// AS OF reads the objects of the point, which may be other objects
	// than today's of the same names (dropped and created again): the
	// privileges are those of the object the point holds, by identity
	// (objectKey: owners and grants are recorded per object, never
	// rolled back, and kept after a DROP).
	need := s.needOn
	if st.AsOf != nil {
		point, err := s.e.asOfReader(st.AsOf)
		if err != nil {
			return nil // the statement fails on its own with this error
		}
		defer point.release()
		need = func(tn *ast.TableName, priv string) error {
			if sc := tn.Schema.O; sc != "" && sc != "public" {
				return nil
			}
			d, ok := point.lookup(tn.Name.O)
			if !ok || s.has(d, priv) {
				return nil // not in the point: the read fails on its own
			}
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for %s %s", relKindWord(d), d.Name)
		}
	}
	for _, tn := range c.names {
		if tn == skip || tn.Schema.O == "" && c.ctes[tn.Name.O] {
			continue
		}
		if _, ok := st.Windows[tn.Name.O]; ok && tn.Schema.O == "" {
			continue
		}
		if err := need(tn, "SELECT"); err != nil {
			return err
		}
		if d := s.relation(tn); d != nil && st.AsOf == nil {
			if err := s.needViewInputs(d, 0); err != nil {
				return err
			}
		}
	}
	for _, w := range st.Windows {
		if w.Schema != "" && w.Schema != "public" {
			continue
		}
		if err := need(&ast.TableName{Name: ast.NewCIStr(w.Source)}, "SELECT"); err != nil {
			return err
		}
	}
	return nil
}

// tableCollector gathers the table names and CTE names of a statement.
type tableCollector struct {
	names []*ast.TableName
	ctes  map[string]bool
}

func (c *tableCollector) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.TableName:
		c.names = append(c.names, x)
	case *ast.CommonTableExpression:
		c.ctes[x.Name.O] = true
	}
	return n, false
}

func (c *tableCollector) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// firstTable is the first table name in n (a DML statement's target).
func firstTable(n ast.Node) *ast.TableName {
	if n == nil {
		return nil
	}
	c := &tableCollector{ctes: map[string]bool{}}
	n.Accept(c)
	if len(c.names) == 0 {
		return nil
	}
	return c.names[0]
}

// readsColumns reports whether an expression refers to a column.
func readsColumns(x ast.ExprNode) bool {
	if x == nil {
		return false
	}
	f := &columnFinder{}
	x.Accept(f)
	return f.found
}

type columnFinder struct{ found bool }

func (f *columnFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.ColumnNameExpr); ok {
		f.found = true
	}
	return n, f.found
}

func (f *columnFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// authorize returns an error when the session's user may not run st,
// and, for a statement that creates an object, what to run once it has
// succeeded: recording the object's owner (only if the object did not
// exist before, so CREATE ... IF NOT EXISTS takes nobody's object).
func (s *session) authorize(st *front.Statement) (after func(), err error) {
	if err := s.permitted(st); err != nil {
		return nil, err
	}
	var name string
	switch n := st.Node.(type) {
	case *front.CreateSource:
		name = n.Name
	case *front.CreateMaterializedView:
		name = n.Name
	case *front.CreateView:
		name = n.Name
	case *front.CreateSequence:
		name = n.Name
	case *front.CreateSecret:
		name = n.Name
	default:
		return nil, nil
	}
	if _, existed := s.e.lookup(name); existed {
		return nil, nil
	}
	return func() { s.recordOwner(name) }, nil
}

// recordOwner records the session's user as the owner of the object name
// it just created (the bootstrap superuser for trusted sessions under
// names that are no created role).
func (s *session) recordOwner(name string) {
	d, ok := s.e.lookup(name)
	if !ok {
		return
	}
	owner := BootstrapUser
	if s.e.roles.Role(s.user) != nil {
		owner = s.user
	}
	// A new table's serial and identity sequences are its owner's, as in
	// PostgreSQL: a role that may INSERT into the table needs USAGE on a
	// serial column's sequence too.
	for _, obj := range append([]*catalog.Descriptor{d}, s.e.ownedSequences(d)...) {
		if err := s.e.roles.SetOwner(obj, owner); err != nil {
			s.e.log.Error("recording an object's owner failed", "object", obj.Name, "owner", owner, "err", err)
		}
	}
}

// prepareShowStatement prepares SHOW: password_encryption says how the
// role store hashes passwords; the other settings are show.go's.
func (s *session) prepareShowStatement(n *front.Show) (*prepared, error) {
	if n.Target == "password_encryption" {
		return showResult(textCols("password_encryption"), func(context.Context) ([]types.Row, error) {
			return []types.Row{textRow("scram-sha-256")}, nil
		}), nil
	}
	return s.prepareShow(n)
}

// substituteUserFunctions replaces current_user, session_user and
// current_role (as PostgreSQL writes them, without parentheses, or as
// calls) with the session's user name, as a text literal named after the
// function.
func substituteUserFunctions(n ast.Node, user string) {
	n.Accept(&userFunctions{user: user})
}

type userFunctions struct{ user string }

var userFunctionNames = map[string]bool{"current_user": true, "session_user": true, "current_role": true}

func (u *userFunctions) Enter(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.SelectField); ok && f.Expr != nil && f.AsName.L == "" {
		if name := u.userFunction(f.Expr); name != "" {
			f.AsName = ast.NewCIStr(name)
		}
	}
	return n, false
}

func (u *userFunctions) Leave(n ast.Node) (ast.Node, bool) {
	if x, ok := n.(ast.ExprNode); ok && u.userFunction(x) != "" {
		return ast.NewValueExpr(u.user, "", ""), true
	}
	return n, true
}

// userFunction returns the function x calls ("current_user", ...), or "".
func (u *userFunctions) userFunction(x ast.ExprNode) string {
	switch x := x.(type) {
	case *ast.FuncCallExpr:
		if name := x.FnName.L; userFunctionNames[name] && len(x.Args) == 0 {
			return name
		}
	case *ast.ColumnNameExpr:
		if c := x.Name; c.Table.L == "" && c.Schema.L == "" && userFunctionNames[c.Name.L] {
			return c.Name.L
		}
	}
	return ""
}

// returningReads reports whether st's RETURNING list reads the target's
// columns (a column or *): PostgreSQL wants SELECT on the target for
// that, not for a list of constants.
func returningReads(st *front.Statement) bool {
	for _, f := range st.Returning {
		if f.WildCard != nil || readsColumns(f.Expr) {
			return true
		}
	}
	return false
}

// needReturning fails an INSERT whose RETURNING list reads the target's
// columns when the user may not SELECT from the target.
func (s *session) needReturning(st *front.Statement, target *ast.TableName) error {
	if !returningReads(st) {
		return nil
	}
	return s.needOn(target, "SELECT")
}
