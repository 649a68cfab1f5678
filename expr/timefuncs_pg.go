package expr

import (
	"fmt"
	"math"
	"time"

	"streamdb/sqlerr"
	"streamdb/types"
)

const usPerDay = 86400 * 1e6

// moreTimeFunc builds PostgreSQL's date and time constructors and interval
// functions (make_date, make_timestamp, make_interval, age, justify_*,
// to_timestamp(float8)); ok is false for other names. Times are UTC, the
// server's session time zone.
func moreTimeFunc(name string, args []Expr) (e Expr, ok bool, err error) {
	n := len(args)
	typed := func(t types.Type, want []types.Type, fn func(v []types.Datum) (types.Datum, error)) (Expr, bool, error) {
		if n != len(want) {
			return nil, true, wrongArgs(name, args)
		}
		for i, a := range args {
			at := a.Type()
			if at == types.Unknown {
				continue
			}
			if want[i].IsNumeric() && !at.IsNumeric() || want[i].IsInteger() && !at.IsInteger() ||
				want[i] == types.Interval && at != types.Interval {
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, want...)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: t, Fn: strict(fn)}, true, nil
	}
	i4, f8 := types.Int4, types.Float8
	switch name {
	case "make_date":
		return typed(types.Date, []types.Type{i4, i4, i4}, func(v []types.Datum) (types.Datum, error) {
			days, err := makeDate(v[0].I, v[1].I, v[2].I)
			if err != nil {
				return types.Null, err
			}
			return types.CheckDate(days)
		})
	case "make_timestamp":
		return typed(types.Timestamp, []types.Type{i4, i4, i4, i4, i4, f8}, func(v []types.Datum) (types.Datum, error) {
			days, err := makeDate(v[0].I, v[1].I, v[2].I)
			if err != nil {
				return types.Null, err
			}
			h, m, s := v[3].I, v[4].I, v[5].F
			if h < 0 || h > 24 || m < 0 || m > 59 || !(s >= 0 && s <= 60) || h == 24 && (m > 0 || s > 0) {
				return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%02s", h, m, fmtSeconds(s))
			}
			if days < types.DaysOfTimestamp(types.MinTimestampMicros)-1 || days > types.DaysOfTimestamp(types.EndTimestampMicros) {
				return types.Null, types.ErrTimestampRange()
			}
			us := types.TimestampOfDays(days) + (h*60+m)*60e6 + int64(math.Round(s*1e6))
			return types.CheckTimestamp(us)
		})
	case "make_interval":
		// make_interval(years, months, weeks, days, hours, mins, secs), each
		// defaulting to zero.
		if n > 7 {
			return nil, true, wrongArgs(name, args)
		}
		want := []types.Type{i4, i4, i4, i4, i4, i4, f8}[:n]
		return typed(types.Interval, want, func(v []types.Datum) (types.Datum, error) {
			var f [7]int64
			secs := 0.0
			for i, d := range v {
				if i == 6 {
					secs = d.F
				} else {
					f[i] = d.I
				}
			}
			us := float64(f[4])*3600e6 + float64(f[5])*60e6 + secs*1e6
			if math.IsNaN(us) || math.Abs(us) >= 9.2e18 {
				return types.Null, types.ErrIntervalRange()
			}
			return intervalParts(f[0]*12+f[1], f[2]*7+f[3], int64(math.Round(us)))
		})
	case "justify_days", "justify_hours", "justify_interval":
		return typed(types.Interval, []types.Type{types.Interval}, func(v []types.Datum) (types.Datum, error) {
			return justify(name, v[0])
		})
	case "age":
		if n != 1 && n != 2 {
			return nil, true, wrongArgs(name, args)
		}
		t := types.Timestamp
		for _, a := range args {
			switch a.Type() {
			case types.Timestamptz:
				t = types.Timestamptz
			case types.Timestamp, types.Date, types.Unknown:
			default:
				return nil, true, wrongArgs(name, args)
			}
		}
		a, err := castArgs(args, t)
		if err != nil {
			return nil, true, err
		}
		return &Func{Name: name, Args: a, T: types.Interval, Fn: strict(func(v []types.Datum) (types.Datum, error) {
			if len(v) == 1 {
				// age(x) is age of x at midnight of today.
				today := types.MicrosOfTime(time.Now().UTC().Truncate(24 * time.Hour))
				return age(today, v[0].I)
			}
			return age(v[0].I, v[1].I)
		})}, true, nil
	case "current_date":
		// The date of now(), so that it is one value per statement too.
		if n != 0 {
			return nil, true, wrongArgs(name, args)
		}
		now, err := Call("now", nil)
		if err != nil {
			return nil, true, err
		}
		e, err := Cast(now, types.Date)
		return e, true, err
	case "current_time", "localtime":
		e, err := currentTimeOfDay(name, args)
		return e, true, err
	case "make_time":
		return typed(types.Time, []types.Type{i4, i4, f8}, func(v []types.Datum) (types.Datum, error) {
			return makeTime(v[0].I, v[1].I, v[2].F)
		})
	case "to_date":
		return typed(types.Date, []types.Type{types.Text, types.Text}, func(v []types.Datum) (types.Datum, error) {
			us, err := parseDateTime(v[0].S, v[1].S)
			if err != nil {
				return types.Null, err
			}
			return types.CheckDate(types.DaysOfTimestamp(us))
		})
	case "to_timestamp":
		if n == 2 {
			return typed(types.Timestamptz, []types.Type{types.Text, types.Text}, func(v []types.Datum) (types.Datum, error) {
				us, err := parseDateTime(v[0].S, v[1].S)
				if err != nil {
					return types.Null, err
				}
				return types.CheckTimestamp(us)
			})
		}
		return typed(types.Timestamptz, []types.Type{f8}, func(v []types.Datum) (types.Datum, error) {
			x := v[0].F
			switch {
			case math.IsNaN(x):
				return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp cannot be NaN")
			case math.IsInf(x, 1):
				return types.NewTimestamp2000(types.TimestampInfinity), nil
			case math.IsInf(x, -1):
				return types.NewTimestamp2000(types.TimestampNegInfinity), nil
			}
			// Seconds since 1970, checked and moved to 2000 before they
			// are rounded to microseconds, as float8_timestamptz does.
			const epochSecs = float64(types.UnixEpochMicros / 1e6)
			bad := func() (types.Datum, error) {
				return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", fmtSeconds(x))
			}
			if x < float64(types.MinTimestampMicros/1e6)-epochSecs || x >= float64(types.EndTimestampMicros/1e6)-epochSecs {
				return bad()
			}
			us := math.RoundToEven((x + epochSecs) * 1e6)
			if us < float64(types.MinTimestampMicros) || us >= float64(types.EndTimestampMicros) {
				return bad()
			}
			return types.NewTimestamp2000(int64(us)), nil
		})
	}
	return nil, false, nil
}

// fmtSeconds prints seconds as PostgreSQL's %g does (C's: six
// significant digits).
func fmtSeconds(s float64) string { return fmt.Sprintf("%.6g", s) }

// makeDate returns the days since 1970-01-01 of a date given as year
// (negative for BC, no year 0), month and day, or 22008 if it is no date.
func makeDate(y, m, d int64) (int64, error) {
	astro := y
	if y < 0 {
		astro = y + 1
	}
	bad := func() error {
		return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	if y == 0 || m < 1 || m > 12 || d < 1 || d > 31 || astro < -4713 || astro > 5874897 {
		return 0, bad()
	}
	t := time.Date(int(astro), time.Month(m), int(d), 0, 0, 0, 0, time.UTC)
	if t.Day() != int(d) {
		return 0, bad()
	}
	return t.Unix() / 86400, nil
}

// justify is justify_days (30 days make a month), justify_hours (24
// hours make a day) or justify_interval (both), each making the signs of
// the parts it touches agree, as PostgreSQL 15 does.
func justify(name string, iv types.Datum) (types.Datum, error) {
	months, days, us := int64(iv.Months), int64(iv.Days), iv.I
	if name != "justify_days" {
		days += us / usPerDay
		us %= usPerDay
	}
	if name != "justify_hours" {
		months += days / 30
		days %= 30
	}
	if name != "justify_hours" {
		// Months and days take one sign; justify_interval counts the
		// time's sign too when there are no days.
		timeSign := us
		if name == "justify_days" {
			timeSign = 0
		}
		if months > 0 && (days < 0 || days == 0 && timeSign < 0) {
			days += 30
			months--
		} else if months < 0 && (days > 0 || days == 0 && timeSign > 0) {
			days -= 30
			months++
		}
	}
	if name != "justify_days" {
		if days > 0 && us < 0 {
			us += usPerDay
			days--
		} else if days < 0 && us > 0 {
			us -= usPerDay
			days++
		}
	}
	return intervalParts(months, days, us)
}

// age is PostgreSQL's age(a, b): a - b in years, months and days of the
// calendar, then time, with the fields' signs made to agree.
//
// PostgreSQL 15 breaks 'infinity' down as the instant its stored value
// (int64's largest microsecond) would be, in the year 294277, and refuses
// '-infinity' as out of range; age does the same, so that
// age('infinity', 'infinity') is 0 as there.
func age(a, b int64) (types.Datum, error) {
	if a == types.TimestampNegInfinity || b == types.TimestampNegInfinity {
		return types.Null, types.ErrTimestampRange()
	}
	t1, t2 := types.TimeOfMicros(a), types.TimeOfMicros(b)
	f := func(t time.Time) [6]int64 {
		return [6]int64{int64(t.Year()), int64(t.Month()), int64(t.Day()), int64(t.Hour()), int64(t.Minute()),
			int64(t.Second())*1e6 + int64(t.Nanosecond()/1000)}
	}
	x, y := f(t1), f(t2)
	var d [6]int64
	for i := range d {
		d[i] = x[i] - y[i]
	}
	neg := a < b
	if neg {
		for i := range d {
			d[i] = -d[i]
		}
	}
	year, mon, day, hour, min, us := d[0], d[1], d[2], d[3], d[4], d[5]
	for us < 0 {
		us += 60e6
		min--
	}
	for min < 0 {
		min += 60
		hour--
	}
	for hour < 0 {
		hour += 24
		day--
	}
	for day < 0 {
		ref := t2
		if neg {
			ref = t1
		}
		day += int64(daysIn(ref.Year(), ref.Month()))
		mon--
	}
	for mon < 0 {
		mon += 12
		year--
	}
	months, micros := year*12+mon, ((hour*60)+min)*60e6+us
	if neg {
		months, day, micros = -months, -day, -micros
	}
	return intervalParts(months, day, micros)
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
