package sqlexpr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	// Zone rules travel with the binary, so results do not depend on the
	// host's zoneinfo.
	_ "time/tzdata"

	"github.com/apache/arrow-go/v18/arrow"
)

// Timestamps with a time zone (lancedb-mv-semantics.md §6.1), as Arrow's
// casts and DataFusion's functions treat them in LanceDB 0.39:
//
//   - a value is an instant (ticks since the epoch, UTC); the zone only
//     says how to show it;
//   - a zone-less timestamp cast to a zoned type is read as a local time
//     in that zone; one that does not exist there (a DST gap) or exists
//     twice (a fold) is an error;
//   - so TIMESTAMP '…' (zone-less; an offset or zone in the text is
//     applied, giving a UTC clock time) compared with a zoned column is a
//     local time in the column's zone;
//   - a string cast straight to a zoned type honours an offset or zone in
//     the text and otherwise reads the local time in the target zone;
//   - a zoned value cast to a zone-less timestamp keeps its instant (the
//     UTC clock time); to a DATE it gives the local date; to text, the
//     local time and its offset ("2025-03-07T19:00:00-05:00");
//   - date_part and date_trunc work on local time.

// zoneOf returns the location of a timestamp type with a time zone, nil
// for other types and for UTC (where local and UTC time agree).
func zoneOf(t arrow.DataType) (*time.Location, error) {
	ts, ok := t.(*arrow.TimestampType)
	if !ok || isUTCName(ts.TimeZone) {
		return nil, nil
	}
	return loadZone(ts.TimeZone)
}

func isUTCName(z string) bool {
	switch z {
	case "", "UTC", "utc", "Z", "+00:00", "Etc/UTC":
		return true
	}
	return false
}

// loadZone resolves an Arrow time zone: an IANA name or a fixed offset
// such as "+05:30".
func loadZone(name string) (*time.Location, error) {
	if off, ok := parseOffset(name); ok {
		return time.FixedZone(name, off), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%w: unknown time zone %q", ErrUnsupported, name)
	}
	return loc, nil
}

// parseOffset reads "+HH:MM", "-HHMM" or "+HH" into seconds east of UTC.
func parseOffset(s string) (int, bool) {
	if len(s) < 3 || (s[0] != '+' && s[0] != '-') {
		return 0, false
	}
	digits := strings.ReplaceAll(s[1:], ":", "")
	if len(digits) != 2 && len(digits) != 4 {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		return 0, false
	}
	h, m := n, 0
	if len(digits) == 4 {
		h, m = n/100, n%100
	}
	if h > 23 || m > 59 {
		return 0, false
	}
	off := h*3600 + m*60
	if s[0] == '-' {
		off = -off
	}
	return off, true
}

// wallTime is the clock time of ticks read as UTC fields.
func wallTime(v int64, unit arrow.TimeUnit) time.Time {
	per := unitsPerSecond(unit)
	sec := floorDiv(v, per)
	return time.Unix(sec, (v-sec*per)*(1e9/per)).UTC()
}

// ticks is t in unit since the epoch.
func ticks(t time.Time, unit arrow.TimeUnit) int64 {
	per := unitsPerSecond(unit)
	return t.Unix()*per + int64(t.Nanosecond())/(1e9/per)
}

// localInstant reads the clock time wall (UTC fields) in loc. It fails
// when that time does not exist in loc or exists twice, as Arrow's cast
// does ("Cannot cast timezone to different timezone").
func localInstant(wall time.Time, loc *time.Location) (time.Time, error) {
	var found []time.Time
	// Offsets in force around the clock time; a transition moves the
	// offset by at most a day.
	for _, probe := range []time.Duration{-26 * time.Hour, 0, 26 * time.Hour} {
		_, off := wall.Add(probe).In(loc).Zone()
		cand := wall.Add(-time.Duration(off) * time.Second)
		if _, o := cand.In(loc).Zone(); o != off {
			continue
		}
		dup := false
		for _, f := range found {
			dup = dup || f.Equal(cand)
		}
		if !dup {
			found = append(found, cand)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return time.Time{}, fmt.Errorf("%w: local time %s does not exist in %s (skipped by daylight saving)", ErrEval, wall.Format("2006-01-02 15:04:05.999999999"), loc)
	}
	return time.Time{}, fmt.Errorf("%w: local time %s is ambiguous in %s (repeated by daylight saving)", ErrEval, wall.Format("2006-01-02 15:04:05.999999999"), loc)
}

// caster returns the cast from one type to another with time zones
// resolved once, for use on every row.
func caster(from, to arrow.DataType) (func(any) (any, error), error) {
	fz, err := zoneOf(from)
	if err != nil {
		return nil, err
	}
	tz, err := zoneOf(to)
	if err != nil {
		return nil, err
	}
	toTS, toZoned := to.(*arrow.TimestampType)
	toZoned = toZoned && toTS.TimeZone != ""
	if fz == nil && tz == nil && !(toZoned && isString(from)) {
		return func(v any) (any, error) { return castValue(v, from, to) }, nil
	}
	return func(v any) (any, error) {
		if v == nil || arrow.TypeEqual(from, to) {
			return v, nil
		}
		return castZoned(v, from, to, fz, tz)
	}, nil
}

// castZoned is castValue where from or to has a time zone other than UTC
// (fz, tz; nil for none or UTC).
func castZoned(v any, from, to arrow.DataType, fz, tz *time.Location) (any, error) {
	x, isInt := v.(int64)
	fromTS, _ := from.(*arrow.TimestampType)
	switch {
	case fromTS != nil && fz != nil && isInt && isString(to):
		return formatZoned(x, fromTS.Unit, fromTS.TimeZone, fz), nil
	case fromTS != nil && fz != nil && isInt && to.ID() == arrow.DATE32:
		_, off := wallTime(x, fromTS.Unit).In(fz).Zone()
		return floorDiv(floorDiv(x, unitsPerSecond(fromTS.Unit))+int64(off), 86400), nil
	case to.ID() == arrow.TIMESTAMP && to.(*arrow.TimestampType).TimeZone != "":
		unit := to.(*arrow.TimestampType).Unit
		loc := tz
		if loc == nil {
			loc = time.UTC
		}
		switch {
		case isString(from):
			s, _ := v.(string)
			inst, zoned, err := parseTimestampText(s)
			if err != nil {
				return nil, fmt.Errorf("%w: cannot cast %s from %s to %s", ErrEval, oneLine(s), from, to)
			}
			if !zoned {
				if inst, err = localInstant(inst, loc); err != nil {
					return nil, err
				}
			}
			return ticks(inst, unit), nil
		case isInt && (fromTS != nil && fromTS.TimeZone == "" || from.ID() == arrow.DATE32):
			wall := time.Unix(x*86400, 0).UTC()
			if fromTS != nil {
				wall = wallTime(x, fromTS.Unit)
			}
			inst, err := localInstant(wall, loc)
			if err != nil {
				return nil, err
			}
			return ticks(inst, unit), nil
		}
	}
	return castValue(v, from, to)
}

// formatZoned renders ticks as Arrow's cast to text does for a zoned
// timestamp: the local time, then the offset.
func formatZoned(v int64, unit arrow.TimeUnit, name string, loc *time.Location) string {
	local := wallTime(v, unit).In(loc)
	_, off := local.Zone()
	s := formatTimestamp(v+int64(off)*unitsPerSecond(unit), unit)
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s%c%02d:%02d", s, sign, off/3600, off/60%60)
}

// parseTimestampText reads a timestamp text. zoned reports an offset or a
// zone name in it, and then t is the instant; otherwise t holds the clock
// time as UTC fields.
func parseTimestampText(s string) (t time.Time, zoned bool, err error) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, ' '); i > 0 && strings.ContainsAny(s[i+1:], "/") || i > 0 && isZoneWord(s[i+1:]) {
		loc, lerr := loadZone(s[i+1:])
		if lerr == nil {
			wall, werr := parseWall(s[:i])
			if werr != nil {
				return time.Time{}, false, werr
			}
			inst, ierr := localInstant(wall, loc)
			return inst, true, ierr
		}
	}
	for _, l := range []string{
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999Z0700",
		"2006-01-02 15:04:05.999999999Z0700",
		"2006-01-02T15:04:05.999999999Z07",
		"2006-01-02 15:04:05.999999999Z07",
	} {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true, nil
		}
	}
	wall, err := parseWall(s)
	return wall, false, err
}

// isZoneWord reports a trailing word that names a zone without a slash.
func isZoneWord(w string) bool {
	switch w {
	case "UTC", "GMT", "Z":
		return true
	}
	return false
}

// parseWall reads a zone-less date and time as UTC fields.
func parseWall(s string) (time.Time, error) {
	for _, l := range []string{
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04",
		"2006-01-02 15:04",
		"2006-01-02",
	} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: cannot parse %q as a timestamp", ErrEval, oneLine(s))
}

// truncLocal truncates the instant t in local time with trunc (which
// works on UTC fields), as DataFusion's date_trunc does for a zoned
// timestamp: the truncated local time keeps t's offset when it is valid
// with it (inside a fold, 01:30 EST truncates to 01:00 EST), else takes
// the offset in force then.
func truncLocal(t time.Time, loc *time.Location, trunc func(time.Time) time.Time) time.Time {
	local := t.In(loc)
	_, off := local.Zone()
	wall := trunc(time.Date(local.Year(), local.Month(), local.Day(), local.Hour(), local.Minute(), local.Second(), local.Nanosecond(), time.UTC))
	cand := wall.Add(-time.Duration(off) * time.Second)
	if _, o := cand.In(loc).Zone(); o == off {
		return cand
	}
	if inst, err := localInstant(wall, loc); err == nil {
		return inst
	}
	return time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), loc)
}
