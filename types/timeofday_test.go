package types

import "testing"

// TestTimeInput checks time and timetz input and output against
// PostgreSQL 15.18's answers (session TimeZone UTC): the value printed, or
// the error message.
func TestTimeInput(t *testing.T) {
	for _, c := range []struct{ in, typ, want string }{
		{"12:34:56.789", "time", "12:34:56.789"},
		{"12:34:56.789", "timetz", "12:34:56.789+00"},
		{"1:2", "time", "01:02:00"},
		{"1:2", "timetz", "01:02:00+00"},
		{"12:34:56+02", "time", "12:34:56"},
		{"12:34:56+02", "timetz", "12:34:56+02"},
		{"allballs", "time", "00:00:00"},
		{"allballs", "timetz", "00:00:00+00"},
		{"24:00:00", "time", "24:00:00"},
		{"24:00:00", "timetz", "24:00:00+00"},
		{"24:00:00.000001", "time", "date/time field value out of range: \"24:00:00.000001\""},
		{"24:00:00.000001", "timetz", "date/time field value out of range: \"24:00:00.000001\""},
		{"04:05 PM", "time", "16:05:00"},
		{"04:05 PM", "timetz", "16:05:00+00"},
		{"12:00 AM", "time", "00:00:00"},
		{"12:00 AM", "timetz", "00:00:00+00"},
		{"13:00 PM", "time", "date/time field value out of range: \"13:00 PM\""},
		{"13:00 PM", "timetz", "date/time field value out of range: \"13:00 PM\""},
		{"12:34:56.5-03:30", "time", "12:34:56.5"},
		{"12:34:56.5-03:30", "timetz", "12:34:56.5-03:30"},
		{"040506", "time", "04:05:06"},
		{"040506", "timetz", "04:05:06+00"},
		{"040506.789", "time", "04:05:06.789"},
		{"040506.789", "timetz", "04:05:06.789+00"},
		{"0405", "time", "04:05:00"},
		{"0405", "timetz", "04:05:00+00"},
		{"040506-08", "time", "04:05:06"},
		{"040506-08", "timetz", "04:05:06-08"},
		{"T040506", "time", "04:05:06"},
		{"T040506", "timetz", "04:05:06+00"},
		{"12:34:56 UTC", "time", "12:34:56"},
		{"12:34:56 UTC", "timetz", "12:34:56+00"},
		{"12:34:56 Europe/Berlin", "time", "invalid input syntax for type time: \"12:34:56 Europe/Berlin\""},
		{"12:34:56 Europe/Berlin", "timetz", "invalid input syntax for type time with time zone: \"12:34:56 Europe/Berlin\""},
		{"2003-04-12 04:05:06 Europe/Berlin", "time", "04:05:06"},
		{"2003-04-12 04:05:06 Europe/Berlin", "timetz", "04:05:06+02"},
		{"2003-04-12 04:05:06", "time", "04:05:06"},
		{"2003-04-12 04:05:06", "timetz", "04:05:06+00"},
		{"12:34:56 PST", "time", "12:34:56"},
		{"12:34:56 PST", "timetz", "12:34:56-08"},
		{"12:34:56 PDT", "time", "12:34:56"},
		{"12:34:56 PDT", "timetz", "12:34:56-07"},
		{"12:34:56 zulu", "time", "12:34:56"},
		{"12:34:56 zulu", "timetz", "12:34:56+00"},
		{"12:34:56Z", "time", "12:34:56"},
		{"12:34:56Z", "timetz", "12:34:56+00"},
		{"12:34:56 +5:30", "time", "12:34:56"},
		{"12:34:56 +5:30", "timetz", "12:34:56+05:30"},
		{"12:34:56-15:59", "time", "12:34:56"},
		{"12:34:56-15:59", "timetz", "12:34:56-15:59"},
		{"12:34:56+16", "time", "time zone displacement out of range: \"12:34:56+16\""},
		{"12:34:56+16", "timetz", "time zone displacement out of range: \"12:34:56+16\""},
		{"25:00", "time", "date/time field value out of range: \"25:00\""},
		{"25:00", "timetz", "date/time field value out of range: \"25:00\""},
		{"12:60", "time", "date/time field value out of range: \"12:60\""},
		{"12:60", "timetz", "date/time field value out of range: \"12:60\""},
		{"12:34:61", "time", "date/time field value out of range: \"12:34:61\""},
		{"12:34:61", "timetz", "date/time field value out of range: \"12:34:61\""},
		{"abc", "time", "invalid input syntax for type time: \"abc\""},
		{"abc", "timetz", "invalid input syntax for type time with time zone: \"abc\""},
		{"12", "time", "invalid input syntax for type time: \"12\""},
		{"12", "timetz", "invalid input syntax for type time with time zone: \"12\""},
		{"12:34:56.1234567", "time", "12:34:56.123457"},
		{"12:34:56.1234567", "timetz", "12:34:56.123457+00"},
		{" 12:34 ", "time", "12:34:00"},
		{" 12:34 ", "timetz", "12:34:00+00"},
		{"12:34:56 GMT+3", "time", "12:34:56"},
		{"12:34:56 GMT+3", "timetz", "12:34:56-03"},
		{"12:34:56 EST5EDT", "time", "invalid input syntax for type time: \"12:34:56 EST5EDT\""},
		{"12:34:56 EST5EDT", "timetz", "invalid input syntax for type time with time zone: \"12:34:56 EST5EDT\""},
		{"jan 12:00", "time", "invalid input syntax for type time: \"jan 12:00\""},
		{"jan 12:00", "timetz", "invalid input syntax for type time with time zone: \"jan 12:00\""},
		{"2003-04-12", "time", "invalid input syntax for type time: \"2003-04-12\""},
		{"2003-04-12", "timetz", "invalid input syntax for type time with time zone: \"2003-04-12\""},
		{"12.5", "time", "invalid input syntax for type time: \"12.5\""},
		{"12.5", "timetz", "invalid input syntax for type time with time zone: \"12.5\""},
		{"T12:30", "time", "12:30:00"},
		{"T12:30", "timetz", "12:30:00+00"},
		{"T1230", "time", "12:30:00"},
		{"T1230", "timetz", "12:30:00+00"},
		{"T99999999999999999999", "time", "date/time field value out of range: \"T99999999999999999999\""},
		{"T99999999999999999999", "timetz", "date/time field value out of range: \"T99999999999999999999\""},
		{"t CET PM 1:2", "time", "invalid input syntax for type time: \"t CET PM 1:2\""},
		{"t CET PM 1:2", "timetz", "invalid input syntax for type time with time zone: \"t CET PM 1:2\""},
		{"h 12 m 30 s 15", "time", "date/time field value out of range: \"h 12 m 30 s 15\""},
		{"h 12 m 30 s 15", "timetz", "date/time field value out of range: \"h 12 m 30 s 15\""},
		{"h 12 mm 30 s 15.5", "time", "12:30:15.5"},
		{"h 12 mm 30 s 15.5", "timetz", "12:30:15.5+00"},
		{"y2003 m4 d12 h 4 mm 5 s 6.5", "time", "04:05:06.5"},
		{"y2003 m4 d12 h 4 mm 5 s 6.5", "timetz", "04:05:06.5+00"},
		{"h 12 mm 30 s 15", "time", "invalid input syntax for type time: \"h 12 mm 30 s 15\""},
		{"h 12 mm 30 s 15", "timetz", "invalid input syntax for type time with time zone: \"h 12 mm 30 s 15\""},
		{"j2451187 12:00", "time", "12:00:00"},
		{"j2451187 12:00", "timetz", "12:00:00+00"},
		{"12:00 ago", "time", "invalid input syntax for type time: \"12:00 ago\""},
		{"12:00 ago", "timetz", "invalid input syntax for type time with time zone: \"12:00 ago\""},
		{"12:00 now", "time", "invalid input syntax for type time: \"12:00 now\""},
		{"12:00 now", "timetz", "invalid input syntax for type time with time zone: \"12:00 now\""},
	} {
		typ := Time
		if c.typ == "timetz" {
			typ = TimeTZ
		}
		got := ""
		d, err := ParseText(c.in, typ)
		if err != nil {
			got = err.Error()
		} else {
			got = FormatText(d, typ)
		}
		if got != c.want {
			t.Errorf("'%s'::%s = %q, PostgreSQL: %q", c.in, c.typ, got, c.want)
		}
	}
}
