package stream

import "testing"

func TestCompose(t *testing.T) {
	a := step(1, []uint64{10, 11}, []uint64{1}, []uint64{2})
	b := step(2, []uint64{12}, []uint64{10, 3}, []uint64{11, 1})
	c := step(3, nil, []uint64{12}, nil)
	got, err := Compose(a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	// 10: inserted, updated → inserted. 11: inserted, deleted → gone.
	// 1: updated, deleted → deleted. 12: inserted, updated → inserted.
	check := func(name string, bm interface{ ToArray() []uint64 }, want ...uint64) {
		t.Helper()
		if got := bm.ToArray(); len(got) != len(want) || (len(want) > 0 && !equalU64(got, want)) {
			t.Fatalf("%s = %v, want %v", name, got, want)
		}
	}
	check("inserted", got.Inserted, 10, 12)
	check("updated", got.Updated, 3)
	check("deleted", got.Deleted, 1, 2)
	if got.From != 1 || got.To != 4 || got.Op != OpMultiple || got.Counts != (Counts{Inserted: 2, Updated: 1, Deleted: 2}) {
		t.Fatalf("composed header: %+v", got)
	}
	if _, err := EncodeChangeSet(got); err != nil {
		t.Fatalf("a composed change set does not encode: %v", err)
	}
	one, err := Compose(a)
	if err != nil || one.Op != "append" || one.To != 2 {
		t.Fatalf("compose one: %+v, %v", one, err)
	}
	if _, err := Compose(a, c); err == nil {
		t.Fatal("composed across a gap")
	}
	other := step(2, nil, nil, nil)
	other.Incarnation = "inc2"
	if _, err := Compose(a, other); err == nil {
		t.Fatal("composed across incarnations")
	}
	slim := step(2, nil, nil, nil)
	slim.IDsOmitted, slim.Inserted, slim.Updated, slim.Deleted = true, nil, nil, nil
	if _, err := Compose(a, slim); err == nil {
		t.Fatal("composed a change set without ids")
	}
}

func TestCoalesce(t *testing.T) {
	a, b, c := step(1, []uint64{1}, nil, nil), step(2, []uint64{2}, nil, nil), step(3, []uint64{3}, nil, nil)
	wide := step(2, []uint64{2, 3}, nil, nil)
	wide.To, wide.Op = 4, OpMultiple
	for _, tc := range []struct {
		name      string
		sets      []*ChangeSet
		watermark uint64
		wantOK    bool
		wantTo    uint64 // 0: nothing to do
	}{
		{"backlog", []*ChangeSet{a, b, c}, 1, true, 4},
		{"out of order and duplicated", []*ChangeSet{c, a, b, b}, 1, true, 4},
		{"partly applied", []*ChangeSet{a, b, c}, 2, true, 4},
		{"all applied", []*ChangeSet{a, b}, 3, true, 0},
		{"gap", []*ChangeSet{a, c}, 1, false, 0},
		{"starts after the watermark", []*ChangeSet{b, c}, 1, false, 0},
		{"range straddles the watermark", []*ChangeSet{a, wide}, 3, false, 0},
		{"overlapping ranges", []*ChangeSet{a, b, wide}, 1, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			batch := &Batch{ChangeSets: tc.sets}
			cs, ok := batch.Coalesce(tc.watermark, "inc1")
			if ok != tc.wantOK || (cs == nil) != (tc.wantTo == 0) || cs != nil && (cs.To != tc.wantTo || cs.From != tc.watermark) {
				t.Fatalf("Coalesce(%d) = %+v, %v; want to=%d ok=%v", tc.watermark, cs, ok, tc.wantTo, tc.wantOK)
			}
		})
	}
	if _, ok := (&Batch{ChangeSets: []*ChangeSet{a}}).Coalesce(1, "inc0"); ok {
		t.Fatal("coalesced a change set of another incarnation")
	}
}

func equalU64(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
