package types

import (
	"math/rand"
	"testing"
	"time"

	"streamdb/sqlerr"
)

// inputFormCases hold PostgreSQL 15's answers (text output with TimeZone
// UTC, or SQLSTATE) for date/time, interval and boolean input forms.
var inputFormCases = []struct {
	in   string
	t    Type
	out  string
	code string
}{
	{in: "2026-01-02 03:04:05+01:00", t: Timestamp, out: "2026-01-02 03:04:05"},
	{in: "2026-01-02 03:04:05+01:00", t: Timestamptz, out: "2026-01-02 02:04:05+00"},
	{in: "2026-01-02 00:00:00Z", t: Date, out: "2026-01-02"},
	{in: "2026-01-02 +00", t: Date, out: "2026-01-02"},
	{in: "2026-01-02 BC", t: Date, out: "2026-01-02 BC"},
	{in: "0044-03-15 BC", t: Timestamp, out: "0044-03-15 00:00:00 BC"},
	{in: "epoch", t: Date, out: "1970-01-01"},
	{in: "+infinity", t: Timestamp, code: "22007"},
	{in: "2020-01-01 24:00:00", t: Timestamp, out: "2020-01-02 00:00:00"},
	{in: "2020-01-01 24:00:01", t: Timestamp, code: "22008"},
	{in: "2020-01-01 23:59:60", t: Timestamp, out: "2020-01-02 00:00:00"},
	{in: "January 8, 1999", t: Date, out: "1999-01-08"},
	{in: "20200101", t: Date, out: "2020-01-01"},
	{in: "2020-1-5", t: Date, out: "2020-01-05"},
	{in: "2020-01-05 12:00 America/New_York", t: Timestamptz, out: "2020-01-05 17:00:00+00"},
	{in: "2020-07-05 12:00 Europe/Berlin", t: Timestamptz, out: "2020-07-05 10:00:00+00"},
	{in: "2020-07-05 12:00 Europe/Berlin", t: Timestamp, out: "2020-07-05 12:00:00"},
	{in: "2020-01-01 12:00 Mars/Olympus", t: Timestamptz, code: "22023"},
	{in: "2020-01-01 12:00 foo", t: Timestamptz, code: "22007"},
	{in: "2020-01-01 12:00 utc", t: Timestamptz, out: "2020-01-01 12:00:00+00"},
	{in: "2020-01-01 12:00 america/new_york", t: Timestamptz, out: "2020-01-01 17:00:00+00"},
	{in: "2020-01-01 12:00 +16", t: Timestamptz, code: "22009"},
	{in: "2018-03-11 02:30 America/New_York", t: Timestamptz, out: "2018-03-11 07:30:00+00"},
	{in: "2018-11-04 01:30 America/New_York", t: Timestamptz, out: "2018-11-04 06:30:00+00"},
	{in: "2018-11-04 01:30 EDT", t: Timestamptz, out: "2018-11-04 05:30:00+00"},
	{in: "2018-11-04 01:30 MSK", t: Timestamptz, out: "2018-11-03 22:30:00+00"},
	{in: "2018-11-04 01:30 CET DST", t: Timestamptz, out: "2018-11-03 23:30:00+00"},
	{in: "y2001m02d04", t: Date, out: "2001-02-04"},
	{in: "1/8/1999", t: Date, out: "1999-01-08"},
	{in: "08-Jan-1999", t: Date, out: "1999-01-08"},
	{in: "Jan-08-1999", t: Date, out: "1999-01-08"},
	{in: "1999-Jan-08", t: Date, out: "1999-01-08"},
	{in: "990108", t: Date, out: "1999-01-08"},
	{in: "1999.008", t: Date, out: "1999-01-08"},
	{in: "J2451187", t: Date, out: "1999-01-08"},
	{in: "January 8, 99 BC", t: Date, out: "0099-01-08 BC"},
	{in: "2020-01-05 04:05:06.789-8", t: Timestamptz, out: "2020-01-05 12:05:06.789+00"},
	{in: "2020-01-05 04:05 PM", t: Timestamp, out: "2020-01-05 16:05:00"},
	{in: "2020-01-05 12:05 AM", t: Timestamp, out: "2020-01-05 00:05:00"},
	{in: "2020-01-05 13:05 AM", t: Timestamp, code: "22008"},
	{in: "Jan 5 04:05:06 2020 PST", t: Timestamptz, out: "2020-01-05 12:05:06+00"},
	{in: "20200105T040506.5", t: Timestamp, out: "2020-01-05 04:05:06.5"},
	{in: "20200105 T T12:30", t: Timestamp, code: "22007"},
	{in: "2020-01-01 allballs", t: Timestamp, out: "2020-01-01 00:00:00"},
	{in: "2020-01-01 12:00:00.1234567", t: Timestamp, out: "2020-01-01 12:00:00.123457"},
	{in: "2020-01-01 12:00:00.0000005", t: Timestamp, out: "2020-01-01 12:00:00"},
	{in: "2020-01-01 12:00:00.0000015", t: Timestamp, out: "2020-01-01 12:00:00.000002"},
	{in: "2020-12-31 23:59:59.9999999", t: Timestamp, out: "2021-01-01 00:00:00"},
	{in: "4714-11-23 BC", t: Date, code: "22008"},
	{in: "5874897-12-31", t: Date, out: "5874897-12-31"},
	{in: "5874898-01-01", t: Date, code: "22008"},
	{in: "4714-11-24 00:00:00+01 BC", t: Timestamptz, code: "22008"},
	{in: "2021-02-29", t: Date, code: "22008"},
	{in: "13/01/2020", t: Date, code: "22008"},
	{in: "Monday, January 8, 2018", t: Date, out: "2018-01-08"},
	{in: "", t: Date, code: "22007"},
	{in: "12:00:00", t: Timestamp, code: "22007"},
	{in: "2020-01-01T12:00:00.5-053", t: Timestamptz, out: "2020-01-01 12:53:00.5+00"},
	{in: "2020-01-01 12:00:00+05:30:15", t: Timestamptz, out: "2020-01-01 06:29:45+00"},
	{in: "2020-01-01 12:00:00 GMT+3", t: Timestamptz, out: "2020-01-01 15:00:00+00"},
	{in: "1900-01-01 12:00:00 Europe/Amsterdam", t: Timestamptz, out: "1900-01-01 11:40:28+00"},
	{in: "J2451187.5", t: Timestamp, out: "1999-01-08 12:00:00"},
	{in: "2020-01-01 12:30.5", t: Timestamp, out: "2020-01-01 00:12:30.5"},
	{in: "2020-01-01 040506", t: Timestamp, out: "2020-01-01 04:05:06"},
	{in: "on 2020-01-01 at 12:00", t: Timestamp, out: "2020-01-01 12:00:00"},
	{in: "2020-01-01 12:00:00 bc bc", t: Timestamp, code: "22007"},
	{in: "2020 Jan 8", t: Timestamp, out: "2020-01-08 00:00:00"},
	{in: "1 ago", t: Interval, code: "22007"},
	{in: "P1Y2M3DT4H5M6S", t: Interval, out: "1 year 2 mons 3 days 04:05:06"},
	{in: "PT1.5S", t: Interval, out: "00:00:01.5"},
	{in: "P0001-02-03T04:05:06", t: Interval, out: "1 year 2 mons 3 days 04:05:06"},
	{in: "P00010203T040506", t: Interval, out: "1 year 2 mons 3 days 04:05:06"},
	{in: "P1.5Y", t: Interval, out: "1 year 6 mons"},
	{in: "P1.5W", t: Interval, out: "10 days 12:00:00"},
	{in: "p1y", t: Interval, code: "22007"},
	{in: "P-1Y-2M", t: Interval, out: "-1 years -2 mons"},
	{in: "P1E2D", t: Interval, out: "100 days"},
	{in: "PT1000000000000000H", t: Interval, code: "22015"},
	{in: "1.7 years", t: Interval, out: "1 year 8 mons"},
	{in: "0.1 mons", t: Interval, out: "3 days"},
	{in: "1 hour 1 hour", t: Interval, code: "22007"},
	{in: "1 day hour", t: Interval, out: "1 day"},
	{in: "01:00 1.5 days", t: Interval, out: "1 day 01:00:00"},
	{in: "1 quarter", t: Interval, code: "22007"},
	{in: "-1-2", t: Interval, out: "-1 years -2 mons"},
	{in: "1-2 3 4:05:06", t: Interval, out: "1 year 2 mons 3 days 04:05:06"},
	{in: "2562047788:00:54.775807", t: Interval, out: "2562047788:00:54.775807"},
	{in: "2562047788:00:54.775808", t: Interval, code: "22015"},
	{in: "178956970 years 8 mons", t: Interval, code: "22008"},
	{in: "2147483648 days", t: Interval, code: "22015"},
	{in: "1.5 millennia", t: Interval, out: "1500 years"},
	{in: "0.5 microseconds", t: Interval, out: "00:00:00"},
	{in: "1:59:60", t: Interval, out: "02:00:00"},
	{in: "1 day -1:00", t: Interval, out: "1 day -01:00:00"},
	{in: "1 +2:00", t: Interval, out: "1 day 02:00:00"},
	{in: "5.5", t: Interval, out: "00:00:05.5"},
	{in: "1h30m", t: Interval, out: "01:30:00"},
	{in: "1 hours ago ago", t: Interval, out: "-01:00:00"},
	{in: "1e3 seconds", t: Interval, code: "22007"},
	{in: "tr", t: Bool, out: "t"},
	{in: "ye", t: Bool, out: "t"},
	{in: "of", t: Bool, out: "f"},
	{in: "o", t: Bool, code: "22P02"},
	{in: "fa", t: Bool, out: "f"},
	{in: " true ", t: Bool, out: "t"},
	{in: "truex", t: Bool, code: "22P02"},
	{in: "01", t: Bool, code: "22P02"},
	{in: "", t: Bool, code: "22P02"},
	{in: "offf", t: Bool, code: "22P02"},
}

func TestInputFormsLikePostgres(t *testing.T) {
	for _, c := range inputFormCases {
		d, err := ParseText(c.in, c.t)
		switch {
		case c.code != "":
			if sqlerr.Code(err) != c.code {
				t.Errorf("%s %q: got %v (%q), want %s", c.t, c.in, err, sqlerr.Code(err), c.code)
			}
		case err != nil:
			t.Errorf("%s %q: %v", c.t, c.in, err)
		case FormatText(d, c.t) != c.out:
			t.Errorf("%s %q: got %q, want %q", c.t, c.in, FormatText(d, c.t), c.out)
		}
	}
}

// TestReadsBackItsOutput: every timestamp, date and interval prints as text
// that reads back as the same value, including the ones PostgreSQL cannot
// read back (the minimum interval). Seeded; the seed is printed on failure.
func TestReadsBackItsOutput(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	edgeTS := []int64{MinTimestampMicros, EndTimestampMicros - 1, 0, -1, 1, TimestampInfinity, TimestampNegInfinity, -62135596800000000 + UnixEpochMicros, -62135596800000001 + UnixEpochMicros, EndUnixMicros - 1, EndUnixMicros}
	edgeDates := []int64{MinDateDays, EndDateDays - 1, 0, -719163, -719162, DateInfinity, DateNegInfinity}
	edgeIv := []Datum{NewInterval(-2147483648, -2147483648, -9223372036854775808), NewInterval(2147483647, 2147483647, 9223372036854775807), NewInterval(0, 0, 0), NewInterval(-1, 1, -1)}
	for i := 0; i < 20000; i++ {
		us := MinTimestampMicros + int64(rng.Uint64()%uint64(EndTimestampMicros/2-MinTimestampMicros/2))*2
		if i < len(edgeTS) {
			us = edgeTS[i]
		}
		for _, typ := range []Type{Timestamp, Timestamptz} {
			s := FormatText(NewTimestamp2000(us), typ)
			d, err := ParseText(s, typ)
			if err != nil || d.I != us {
				t.Fatalf("seed %d: %s %d printed %q read back as %d, %v", seed, typ, us, s, d.I, err)
			}
		}
		days := MinDateDays + rng.Int63n(EndDateDays-MinDateDays)
		if i < len(edgeDates) {
			days = edgeDates[i]
		}
		s := FormatText(NewDate(days), Date)
		if d, err := ParseText(s, Date); err != nil || d.I != days {
			t.Fatalf("seed %d: date %d printed %q read back as %d, %v", seed, days, s, d.I, err)
		}
		iv := NewInterval(int32(rng.Uint32()), int32(rng.Uint32()), int64(rng.Uint64()))
		if rng.Intn(2) == 0 {
			iv = NewInterval(int32(rng.Intn(1000)-500), int32(rng.Intn(1000)-500), rng.Int63n(1e12)-5e11)
		}
		if i < len(edgeIv) {
			iv = edgeIv[i]
		}
		s = FormatText(iv, Interval)
		if d, err := ParseText(s, Interval); err != nil || d != iv {
			t.Fatalf("seed %d: interval %+v printed %q read back as %+v, %v", seed, iv, s, d, err)
		}
	}
}

// TestFastTimestampAgrees: the fast path for ISO timestamps gives what the
// general decoder gives, or leaves the input to it.
func TestFastTimestampAgrees(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	pick := func(xs ...string) string { return xs[rng.Intn(len(xs))] }
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + rng.Intn(10))
		}
		return string(b)
	}
	for i := 0; i < 50000; i++ {
		s := pick("1", "2", "9", "0") + digits(3) + "-" + pick("0", "1") + digits(1) + "-" + pick("0", "1", "2", "3") + digits(1) +
			pick(" ", "T") + pick("0", "1", "2") + digits(1) + ":" + pick("0", "5", "6") + digits(1) + ":" + pick("0", "5", "6") + digits(1) +
			pick("", "."+digits(1+rng.Intn(9)), ".") + pick("", "Z", "+00", "-"+digits(2), "+"+digits(2)+":"+digits(2), " UTC", "+1")
		for _, withZone := range []bool{false, true} {
			us, ok := fastTimestamp(s, withZone)
			if !ok {
				continue
			}
			r, err := decodeDateTimeText(s, "timestamp", dateTimeBufSize)
			if err != nil {
				t.Fatalf("seed %d: %q: fast path read %d, decoder failed: %v", seed, s, us, err)
			}
			want, ok := timestampFromTm(r, withZone)
			if !ok || want != us {
				t.Fatalf("seed %d: %q (zone %v): fast path %d, decoder %d (%v)", seed, s, withZone, us, want, ok)
			}
		}
	}
}
