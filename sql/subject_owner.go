package sql

import (
	"strings"

	"streamdb/catalog"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/sqlerr"
)

// A subject belongs to the stream that declared it first. A second
// CREATE STREAM on it reads everything the first one's producers send and
// its INSERTs land in the first one's input, so only the first stream's
// owner (or a superuser) may declare one: for anyone else it would be
// SELECT and INSERT on the first stream without a grant. A sink's subject
// is its owner's the same way: a stream there reads the sink's view. A table's
// changelog subject is never a stream's (meta.CheckSubjectFree refuses it for
// everyone), and neither is, for a role that is not a superuser, a
// subject under the tables' prefix or a dropped table's changelog not yet
// deleted: the stream would read the table's old rows. A subject pattern
// (orders.>) stands for every subject it matches: it is refused where any
// of them would be, and a subject or pattern some other role's pattern
// matches is that role's.

// needSubject refuses (42501) n, a CREATE STREAM by a role that is no
// superuser, on a subject that holds another role's rows.
func (s *session) needSubject(n *front.CreateSource) error {
	if n.Kind == front.KindTable && !n.AppendOnly {
		return nil // a table's changelog starts after what its subject holds
	}
	if _, exists := s.e.lookup(n.Name); exists {
		return nil // CREATE ... IF NOT EXISTS does nothing; CREATE fails
	}
	subject := n.Name
	if v, ok := n.Options["subject"]; ok {
		subject = v
	}
	hint := "Choose another subject with WITH (subject = '...')."
	if strings.HasPrefix(subject, tableSubjectPrefix) || meta.SubjectsCollide(subject, tableSubjectPrefix+">") || s.e.droppedTableSubject(subject) {
		return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for subject %q: it holds a table's changelog", clipSubject(subject)).
			WithHint("Subjects under %q are the changelogs of tables; only a superuser may read them as a stream. %s", tableSubjectPrefix, hint)
	}
	streams := s.e.objects(catalog.KindStream)
	for _, o := range s.e.objects(catalog.KindTable) {
		if o.Envelope() != "" { // a stream stored as a table
			streams = append(streams, o)
		}
	}
	for _, o := range streams {
		if !meta.SubjectsCollide(o.Subject, subject) {
			continue
		}
		if owner := s.e.roles.Owner(o); owner != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for subject %q: it belongs to stream %s", clipSubject(subject), o.Name).
				WithHint("Only the owner of %s or a superuser may declare another stream on its subject. Read it as %s once its owner has run GRANT SELECT ON %s TO %s, or %s",
					o.Name, o.Name, o.Name, s.user, hint)
		}
	}
	sinks, err := s.e.sinks()
	if err != nil {
		return sqlerr.New(sqlerr.InternalError, "reading the sinks: %v", err)
	}
	for _, k := range sinks {
		if meta.SubjectsCollide(k.Subject, subject) && k.Owner != s.user {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied for subject %q: sink %s publishes the rows of %s there", clipSubject(subject), k.Name, k.View).
				WithHint("Only the owner of sink %s or a superuser may read its subject as a stream. Read %s once its owner has run GRANT SELECT ON %s TO %s, or %s",
					k.Name, k.View, k.View, s.user, hint)
		}
	}
	return nil
}

// droppedTableSubject reports whether subject is the changelog of a
// dropped table whose JetStream stream is not deleted yet.
func (e *Engine) droppedTableSubject(subject string) bool {
	return e.dropped.PendingCollides(subject)
}
