package expr

import (
	"math"

	"streamdb/sqlerr"
	"streamdb/types"
)

// zoneFunc builds timezone(zone, ts) (what x AT TIME ZONE zone reads as)
// and date_bin(stride, source, origin); ok is false for other names.
//
// timezone of a timestamp is the instant its wall clock reads in the
// zone (a timestamptz); of a timestamptz (a date or an untyped literal
// is read as one, as PostgreSQL resolves it) the wall clock in the zone
// at that instant (a timestamp). The zone is text (an abbreviation, a
// tzdata name or a POSIX offset) or an interval of hours and less.
func zoneFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	switch name {
	case "timezone":
		e, err = timezoneCall(args)
		return e, true, err
	case "date_bin":
		e, err = dateBinCall(args)
		return e, true, err
	}
	return nil, false, nil
}

func timezoneCall(args []Expr) (Expr, error) {
	if len(args) != 2 {
		return nil, wrongArgs("pg_catalog.timezone", args)
	}
	zt := args[0].Type()
	if zt != types.Interval && !zt.IsString() && zt != types.Unknown {
		return nil, wrongArgs("pg_catalog.timezone", args)
	}
	if zt == types.Unknown {
		zt = types.Text
	}
	from, to := types.Timestamptz, types.Timestamp
	switch args[1].Type() {
	case types.Timestamp:
		from, to = types.Timestamp, types.Timestamptz
	case types.Timestamptz, types.Date, types.Unknown:
	default:
		return nil, wrongArgs("pg_catalog.timezone", args)
	}
	a, err := castArgs(args, zt, from)
	if err != nil {
		return nil, err
	}
	fn := func(v []types.Datum) (types.Datum, error) {
		z, err := zoneOf(v[0])
		if err != nil {
			return types.Null, err
		}
		shift := z.Local
		if from == types.Timestamp {
			shift = z.UTC
		}
		us, ok := shift(v[1].I)
		if !ok {
			return types.Null, types.ErrTimestampRange()
		}
		return types.NewTimestamp2000(us), nil
	}
	return &Func{Name: "timezone", Args: a, T: to, Fn: strict(fn)}, nil
}

// zoneOf reads timezone's zone argument.
func zoneOf(z types.Datum) (types.TimeZone, error) {
	if z.K == types.KindInterval {
		if z.Months != 0 || z.Days != 0 {
			return types.TimeZone{}, sqlerr.New(sqlerr.InvalidParameterValue, "interval time zone %q must not include months or days",
				types.FormatText(z, types.Interval))
		}
		return types.FixedTimeZone(int(z.I / 1e6)), nil
	}
	if tz, ok := types.LookupTimeZone(z.S); ok {
		return tz, nil
	}
	return types.TimeZone{}, sqlerr.New(sqlerr.InvalidParameterValue, "time zone %q not recognized", z.S)
}

// dateBinCall is date_bin(stride, source, origin): the start of the bin
// of width stride, counted from origin, that holds source. The timestamp
// variant applies when both times are timestamps (or one is untyped),
// the timestamptz one otherwise.
func dateBinCall(args []Expr) (Expr, error) {
	if len(args) != 3 {
		return nil, wrongArgs("date_bin", args)
	}
	if t := args[0].Type(); t != types.Interval && t != types.Unknown {
		return nil, wrongArgs("date_bin", args)
	}
	typ := types.Timestamptz
	s, o := args[1].Type(), args[2].Type()
	for _, t := range []types.Type{s, o} {
		if !t.IsTime() && t != types.Date && t != types.Unknown {
			return nil, wrongArgs("date_bin", args)
		}
	}
	if (s == types.Timestamp || s == types.Unknown) && (o == types.Timestamp || o == types.Unknown) && (s != o || s == types.Timestamp) {
		typ = types.Timestamp
	}
	a, err := castArgs(args, types.Interval, typ, typ)
	if err != nil {
		return nil, err
	}
	fn := func(v []types.Datum) (types.Datum, error) {
		us, err := dateBin(v[0], v[1].I, v[2].I)
		if err != nil {
			return types.Null, err
		}
		return types.NewTimestamp2000(us), nil
	}
	return &Func{Name: "date_bin", Args: a, T: typ, Fn: strict(fn)}, nil
}

// dateBin is PostgreSQL 15's timestamp_bin over microseconds: bins are
// counted towards minus infinity from origin, so a source before origin
// falls in the bin that starts at or before it.
func dateBin(stride types.Datum, source, origin int64) (int64, error) {
	if !types.TimestampFinite(source) {
		return source, nil
	}
	if !types.TimestampFinite(origin) {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "origin out of range")
	}
	if stride.Months != 0 {
		return 0, sqlerr.New(sqlerr.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	const day = int64(usPerDay)
	days := int64(stride.Days)
	if days > math.MaxInt64/day || days < math.MinInt64/day {
		return 0, types.ErrIntervalRange()
	}
	width, ok := add64(days*day, stride.I)
	if !ok {
		return 0, types.ErrIntervalRange()
	}
	if width <= 0 {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "stride must be greater than zero")
	}
	diff, ok := sub64(source, origin)
	if !ok {
		return 0, types.ErrIntervalRange()
	}
	mod := diff % width
	r := origin + (diff - mod)
	if mod < 0 {
		r -= width
	}
	if !types.ValidTimestamp(r) || !types.TimestampFinite(r) {
		return 0, types.ErrTimestampRange()
	}
	return r, nil
}
