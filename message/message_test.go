package message

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRefreshWireShape(t *testing.T) {
	n := &Notification{
		View: "v", Source: "events", Mode: ModeIncremental, RowsWritten: 1, SourceVersion: 12, Version: 7, LagMS: 3.1,
		CommittedAt: time.Date(2026, 12, 1, 9, 30, 0, 123000000, time.FixedZone("CET", 3600)),
	}
	data, err := EncodeRefresh(n)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"schema":1,"view":"v","source":"events","mode":"incremental","rows_written":1,"source_version":12,"version":7,"lag_ms":3.1,"committed_at":"2026-12-01T08:30:00.123Z"}`
	if string(data) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", data, want)
	}
	got, err := DecodeRefresh(data)
	if err != nil {
		t.Fatal(err)
	}
	if !got.CommittedAt.Equal(n.CommittedAt) || got.View != "v" || got.Version != 7 || got.LagMS != 3.1 || got.Schema != 1 {
		t.Fatalf("round trip: %+v", got)
	}
	n.Mode, n.Error, n.Instance = "", "source events was dropped", "node-2"
	data, err = EncodeRefresh(n)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), `,"error":"source events was dropped","instance":"node-2"}`) {
		t.Fatalf("error notification: %s", data)
	}
	if got, err := DecodeRefresh(data); err != nil || got.Instance != "node-2" {
		t.Fatalf("instance round trip: %+v, %v", got, err)
	}
}

func TestDecodeRefreshRejects(t *testing.T) {
	good := `"view":"v","source":"events","mode":"incremental","rows_written":1,"source_version":12,"version":7,"lag_ms":3.1,"committed_at":"2026-12-01T08:30:00Z"`
	for _, tc := range []struct {
		name, msg string
		want      error
	}{
		{"good", `{"schema":1,` + good + `}`, nil},
		{"unknown field ignored", `{"schema":1,"future":true,` + good + `}`, nil},
		{"schema 2", `{"schema":2,` + good + `}`, ErrUnsupportedSchema},
		{"schema 0", `{"schema":0}`, ErrUnsupportedSchema},
		{"no schema", `{` + good + `}`, ErrBadMessage},
		{"schema string", `{"schema":"1",` + good + `}`, ErrBadMessage},
		{"not json", `schema 1`, ErrBadMessage},
		{"array", `[1]`, ErrBadMessage},
		{"no view", `{"schema":1,` + strings.Replace(good, `"view":"v",`, ``, 1) + `}`, ErrBadMessage},
		{"empty view", `{"schema":1,` + strings.Replace(good, `"view":"v"`, `"view":""`, 1) + `}`, ErrBadMessage},
		{"bad mode", `{"schema":1,` + strings.Replace(good, `incremental`, `partial`, 1) + `}`, ErrBadMessage},
		{"empty mode without error", `{"schema":1,` + strings.Replace(good, `"incremental"`, `""`, 1) + `}`, ErrBadMessage},
		{"empty mode with error", `{"schema":1,"error":"boom",` + strings.Replace(good, `"incremental"`, `""`, 1) + `}`, nil},
		{"empty error", `{"schema":1,"error":"",` + good + `}`, ErrBadMessage},
		{"negative lag", `{"schema":1,` + strings.Replace(good, `3.1`, `-1`, 1) + `}`, ErrBadMessage},
		{"negative version", `{"schema":1,` + strings.Replace(good, `"version":7`, `"version":-7`, 1) + `}`, ErrBadMessage},
		{"bad time", `{"schema":1,` + strings.Replace(good, `2026-12-01T08:30:00Z`, `yesterday`, 1) + `}`, ErrBadMessage},
		{"no time", `{"schema":1,` + strings.Replace(good, `,"committed_at":"2026-12-01T08:30:00Z"`, ``, 1) + `}`, ErrBadMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRefresh([]byte(tc.msg))
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("DecodeRefresh(%s) = %v, want %v", tc.msg, err, tc.want)
			}
		})
	}
}

func TestChangeSetRoundTrip(t *testing.T) {
	cs := step(11, []uint64{1, 2, 3, 1 << 40}, []uint64{9}, []uint64{4})
	data, err := EncodeChangeSet(cs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeChangeSet(data)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Inserted.Equals(cs.Inserted) || !got.Updated.Equals(cs.Updated) || !got.Deleted.Equals(cs.Deleted) ||
		got.Counts != (Counts{4, 1, 1}) || got.From != 11 || got.To != 12 || got.Op != "append" ||
		!got.CommittedAt.Equal(cs.CommittedAt) || got.SchemaFingerprint != "fp1" || got.Incarnation != "inc1" {
		t.Fatalf("round trip: %+v", got)
	}
	// nil bitmaps mean empty sets and are written as such.
	empty := step(1, nil, nil, nil)
	empty.Inserted, empty.Updated, empty.Deleted = nil, nil, nil
	data, err = EncodeChangeSet(empty)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = DecodeChangeSet(data); err != nil || !got.Inserted.IsEmpty() || got.Counts != (Counts{}) {
		t.Fatalf("empty change set: %+v, %v", got, err)
	}
}

func TestChangeSetValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*ChangeSet)
	}{
		{"empty source", func(c *ChangeSet) { c.Source = "" }},
		{"empty incarnation", func(c *ChangeSet) { c.Incarnation = "" }},
		{"from == to", func(c *ChangeSet) { c.To = c.From }},
		{"from > to", func(c *ChangeSet) { c.From = c.To + 1 }},
		{"range with a single op", func(c *ChangeSet) { c.To = c.From + 3 }},
		{"op with spaces", func(c *ChangeSet) { c.Op = "an op" }},
		{"no time", func(c *ChangeSet) { c.CommittedAt = time.Time{} }},
		{"bad utf-8", func(c *ChangeSet) { c.Source = "\xff" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := step(3, []uint64{1}, nil, nil)
			tc.edit(cs)
			if _, err := EncodeChangeSet(cs); !errors.Is(err, ErrBadMessage) {
				t.Fatalf("encode: %v, want ErrBadMessage", err)
			}
		})
	}
	data, err := EncodeChangeSet(step(3, []uint64{1, 2}, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(map[string]any)
		want error
	}{
		{"good", func(map[string]any) {}, nil},
		{"schema 2", func(m map[string]any) { m["schema"] = 2 }, ErrUnsupportedSchema},
		{"counts disagree", func(m map[string]any) { m["counts"].(map[string]any)["inserted"] = 3 }, ErrBadMessage},
		{"no deleted", func(m map[string]any) { delete(m, "deleted") }, ErrBadMessage},
		{"no counts", func(m map[string]any) { delete(m, "counts") }, ErrBadMessage},
		{"no fingerprint", func(m map[string]any) { delete(m, "schema_fingerprint") }, ErrBadMessage},
		{"bad base64", func(m map[string]any) { m["updated"] = "!!" }, ErrBadMessage},
		{"not roaring", func(m map[string]any) { m["updated"] = "AAAAAAAAAAAB" }, ErrBadMessage},
		{"huge bucket count", func(m map[string]any) { m["updated"] = "/////////w==" }, ErrBadMessage},
		{"omitted with ids", func(m map[string]any) { m["ids_omitted"] = true }, ErrBadMessage},
		{"omitted without ids", func(m map[string]any) {
			m["ids_omitted"] = true
			delete(m, "inserted")
			delete(m, "updated")
			delete(m, "deleted")
		}, nil},
		{"negative from", func(m map[string]any) { m["from"] = -1 }, ErrBadMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := map[string]any{}
			raw, _ := json.Marshal(m)
			_ = json.Unmarshal(raw, &c)
			tc.edit(c)
			msg, _ := json.Marshal(c)
			_, err := DecodeChangeSet(msg)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("DecodeChangeSet(%s) = %v, want %v", msg, err, tc.want)
			}
		})
	}
}

func FuzzDecodeChangeSet(f *testing.F) {
	for _, cs := range []*ChangeSet{step(1, []uint64{1, 2}, []uint64{5}, nil), step(7, nil, nil, []uint64{1 << 50})} {
		data, err := EncodeChangeSet(cs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":1,"inserted":"/////////w=="}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := DecodeChangeSet(data)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) && !errors.Is(err, ErrUnsupportedSchema) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		// What decodes re-encodes and decodes to the same change set.
		again, err := EncodeChangeSet(cs)
		if err != nil {
			t.Fatalf("decoded change set does not encode: %v", err)
		}
		cs2, err := DecodeChangeSet(again)
		if err != nil {
			t.Fatalf("re-encoded change set does not decode: %v", err)
		}
		if cs2.Counts != cs.Counts || cs2.From != cs.From || cs2.To != cs.To || cs2.Source != cs.Source ||
			!cs2.CommittedAt.Equal(cs.CommittedAt) || cs2.IDsOmitted != cs.IDsOmitted {
			t.Fatalf("round trip changed %+v into %+v", cs, cs2)
		}
		if !cs.IDsOmitted && !cs2.Inserted.Equals(cs.Inserted) {
			t.Fatal("round trip changed the inserted ids")
		}
	})
}

func FuzzDecodeRefresh(f *testing.F) {
	data, err := EncodeRefresh(refreshOf("v", 7))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"schema":1,"view":"v","source":"s","mode":"","error":"x","rows_written":0,"source_version":0,"version":0,"lag_ms":0,"committed_at":"2026-01-01T00:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := DecodeRefresh(data)
		if err != nil {
			if !errors.Is(err, ErrBadMessage) && !errors.Is(err, ErrUnsupportedSchema) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		again, err := EncodeRefresh(n)
		if err != nil {
			t.Fatalf("decoded notification does not encode: %v", err)
		}
		n2, err := DecodeRefresh(again)
		if err != nil {
			t.Fatalf("re-encoded notification does not decode: %v", err)
		}
		if n2.View != n.View || n2.Mode != n.Mode || n2.Version != n.Version || n2.Error != n.Error || n2.LagMS != n.LagMS ||
			!n2.CommittedAt.Equal(n.CommittedAt) {
			t.Fatalf("round trip changed %+v into %+v", n, n2)
		}
	})
}

func TestNewChangeSet(t *testing.T) {
	at := time.Now()
	one := NewChangeSet("s", "i", 3, 4, "delete", nil, nil, bitmap(1, 2), "fp", at)
	if one.Op != "delete" || one.Counts != (Counts{0, 0, 2}) || one.Inserted == nil {
		t.Fatalf("single step: %+v", one)
	}
	wide := NewChangeSet("s", "i", 3, 9, "append", bitmap(5), nil, nil, "fp", at)
	if wide.Op != OpMultiple {
		t.Fatalf("range op = %q", wide.Op)
	}
	for _, cs := range []*ChangeSet{one, wide} {
		if _, err := EncodeChangeSet(cs); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRefreshAddedFields: source_committed_at and recovered are written
// only when set (the older shape stays byte for byte what it was) and
// read back.
func TestRefreshAddedFields(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	n := refreshOf("v", 7)
	n.CommittedAt = at
	n.SourceCommittedAt = at.Add(-1500 * time.Millisecond)
	n.Recovered = true
	data, err := EncodeRefresh(n)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"source_committed_at":"2026-12-01T09:29:58.5Z","recovered":true`) {
		t.Fatalf("encoded %s", data)
	}
	got, err := DecodeRefresh(data)
	if err != nil {
		t.Fatal(err)
	}
	if !got.SourceCommittedAt.Equal(n.SourceCommittedAt) || !got.Recovered {
		t.Fatalf("round trip: %+v", got)
	}
	n.SourceCommittedAt, n.Recovered = time.Time{}, false
	if data, err = EncodeRefresh(n); err != nil || strings.Contains(string(data), "source_committed_at") || strings.Contains(string(data), "recovered") {
		t.Fatalf("unset fields written: %s (%v)", data, err)
	}
	bad := strings.Replace(string(data), `"committed_at"`, `"source_committed_at":"yesterday","committed_at"`, 1)
	if _, err := DecodeRefresh([]byte(bad)); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("bad source_committed_at: %v", err)
	}
}
