package sql

import (
	"context"

	"streamdb/exec"
	"streamdb/front"
	"streamdb/meta"
	"streamdb/pgwire"
	"streamdb/sqlerr"
	"streamdb/types"
)

// prepareChangesBetween prepares SELECT * FROM view CHANGES BETWEEN a AND
// b: the rows whose multiplicity differs between the view's state at
// point a and at point b, each with diff = (count at b) - (count at a);
// retractions first. Both points are read as AS OF reads them; the view
// must be the same view (same object, not one re-created under its
// name) at both.
func (s *session) prepareChangesBetween(n *front.ChangesBetween) (*prepared, error) {
	d, cols, err := s.feedView("CHANGES BETWEEN", n.View)
	if err != nil {
		return nil, err
	}
	return &prepared{cols: changeColumns(false, cols), run: func(ctx context.Context, _ []types.Datum, w pgwire.RowWriter) (string, error) {
		states := make([]map[string]exec.RowDiff, 2)
		for i, at := range []front.AsOf{n.From, n.To} {
			m, err := s.e.resolvePoint(at.Kind, at.Name, at.ID, at.Time)
			if err != nil {
				return "", err
			}
			st, err := s.e.openPoint(m)
			if err != nil {
				return "", err
			}
			pd, ok := st.lookup(d.Name)
			if !ok || pd.ID != d.ID {
				st.release()
				return "", sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %s did not exist at %s (epoch %d)", d.Name, meta.PointLabel(m), m.Epoch).
					WithHint("Name points taken after the view was created.")
			}
			states[i], err = exec.ViewCounts(st.p.Store.DB(), d.ID, len(cols))
			st.release()
			if err != nil {
				return "", err
			}
		}
		f := &feed{w: w, ncols: len(cols), noEpoch: true}
		cs := exec.DiffCounts(states[0], states[1])
		if err := f.write(ctx, 0, cs); err != nil {
			return "", err
		}
		return selectTag(len(cs)), nil
	}}, nil
}
