package binder

import (
	"streamdb/front"
	"streamdb/plan"
	"streamdb/sqlerr"
	"streamdb/types"
)

// window returns the TUMBLE / HOP call that the front layer replaced by the
// table name, if name is one.
func (sb *selectBinder) window(name string) (*front.WindowTVF, bool) {
	if sb.params == nil || sb.params.stmt == nil {
		return nil, false
	}
	w, ok := sb.params.stmt.Windows[name]
	return w, ok
}

// bindWindow binds TUMBLE(source, time_col, size) / HOP(source, time_col,
// slide, size): the source's columns plus window_start and window_end.
func (sb *selectBinder) bindWindow(w *front.WindowTVF, alias string) (plan.Node, *scope, error) {
	src, srcScope, err := sb.bindTableName(w.Source, w.Schema, "")
	if err != nil {
		return nil, nil, err
	}
	timeCol, err := srcScope.resolve("", w.TimeColumn)
	if err != nil {
		return nil, nil, err
	}
	cols := src.Schema()
	tt := cols[timeCol].Type
	if !tt.IsTime() {
		return nil, nil, sqlerr.New(sqlerr.DatatypeMismatch, "the time column of %s must be a timestamp, not %s", w.Kind, tt)
	}
	size, err := fixedInterval(w.Size)
	if err != nil {
		return nil, nil, err
	}
	slide := size
	if w.Kind == front.Hop {
		if slide, err = fixedInterval(w.Slide); err != nil {
			return nil, nil, err
		}
	}
	if alias == "" {
		alias = w.Alias
	}
	if alias == "" {
		alias = w.Source
	}
	out := append(append([]types.Column{}, cols...),
		types.Column{Name: "window_start", Type: tt}, types.Column{Name: "window_end", Type: tt})
	return &plan.Window{Input: src, TimeCol: timeCol, Size: size, Slide: slide, Cols: out}, scopeOf(alias, out), nil
}

// fixedInterval reads a window size: a positive interval of days and
// smaller units (months have no fixed length).
func fixedInterval(text string) (int64, error) {
	d, err := types.ParseInterval(text)
	if err != nil {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%s", err.Error())
	}
	if d.Months != 0 {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "window sizes in months or years are not supported; use days")
	}
	// Days are at most 2^31, so days in microseconds fit a float64
	// exactly enough to compare with the bound before the int64 sum.
	if float64(d.Days)*86400e6+float64(d.I) > float64(plan.MaxWindowMicros) {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "window size %q is too large: at most half the timestamp range (about 149000 years)", text)
	}
	us := int64(d.Days)*86400e6 + d.I
	if us <= 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "window size %q must be positive", text)
	}
	if us > plan.MaxWindowMicros {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "window size %q is too large: at most half the timestamp range (about 149000 years)", text)
	}
	return us, nil
}
