package meta

import (
	"strings"

	"streamdb/catalog"
	"streamdb/sqlerr"
	"streamdb/types"
)

// SinkColumns are the columns of SHOW SINKS.
var SinkColumns = []types.Column{
	{Name: "name", Type: types.Text}, {Name: "view", Type: types.Text}, {Name: "subject", Type: types.Text},
	{Name: "jetstream_stream", Type: types.Text}, {Name: "format", Type: types.Text}, {Name: "envelope", Type: types.Text},
	{Name: "published_epoch", Type: types.Int8}, {Name: "pending_epochs", Type: types.Int8},
	{Name: "pending_changes", Type: types.Int8}, {Name: "status", Type: types.Text},
}

// Rows are the rows of SHOW SINKS: every sink, ordered by name, with its
// lag (Lag: the outbox entries committed but not yet acknowledged by
// JetStream, a snapshot not yet published counting as one epoch) and
// how its publishing goes (status, the node's publisher).
func (s *Sinks) Rows(status func(*SinkDescriptor) SinkStatus) ([]types.Row, error) {
	lags, err := s.Lag()
	if err != nil {
		return nil, err
	}
	var rows []types.Row
	for _, l := range lags {
		d := l.Sink
		st := status(d)
		published := types.Null
		if st.Epoch > 0 {
			published = types.NewInt(int64(st.Epoch))
		}
		state := "publishing"
		switch {
		case st.Stopped:
			state = "stopped: " + st.Error
		case st.Error != "":
			state = "retrying: " + st.Error
		}
		rows = append(rows, types.Row{
			types.NewString(d.Name), types.NewString(d.View), types.NewString(d.Subject), types.NewString(d.JSStream),
			types.NewString(d.Format), types.NewString(d.Envelope), published,
			types.NewInt(l.Epochs), types.NewInt(l.Changes), types.NewString(state),
		})
	}
	return rows, nil
}

// CheckSinkSubject refuses a sink subject streamdb reads or writes
// itself: one under streamdb.> (tables' changelogs, transactions), or the
// subject of a stream or table of objs (the live catalog). Another sink's
// subject is CheckFree's to refuse.
func CheckSinkSubject(subject string, objs map[string]*catalog.Descriptor) error {
	if rest, ok := strings.CutPrefix(subject, "streamdb."); ok {
		return sqlerr.New(sqlerr.InvalidName, "subject %q is reserved for streamdb's own use (subjects starting with \"streamdb.\")", subject).
			WithHint("Choose a subject outside streamdb.>, e.g. INTO 'sinks.%s'.", rest)
	}
	for _, o := range objs {
		if o.Subject == subject && (o.Kind == catalog.KindStream || o.Kind == catalog.KindTable) {
			return sqlerr.New(sqlerr.DuplicateObject, "subject %q is the subject of %s %s", subject, o.Kind, o.Name).
				WithHint("A sink publishes to a subject of its own; streamdb reads this one. Choose another subject.")
		}
	}
	return nil
}
