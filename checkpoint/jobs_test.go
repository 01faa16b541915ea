package checkpoint

import (
	"errors"
	"testing"
)

// TestJobs: job entries come back oldest first, an overwrite replaces
// the entry, dropped entries are gone, and all of it survives a reopen
// (the daemon reads them at start to find the interrupted jobs).
func TestJobs(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 4; seq++ {
		if err := s.PutJob(ctx, JobEntry{Seq: seq, Value: []byte{byte('a' + seq)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutJob(ctx, JobEntry{Seq: 3, Done: true, Value: []byte("done")}, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.PutJob(ctx, JobEntry{}); !errors.Is(err, errJobSeq) {
		t.Fatalf("PutJob of seq 0: %v, want errJobSeq", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir, Options{})
	got, err := s.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []JobEntry{{Seq: 3, Done: true, Value: []byte("done")}, {Seq: 4, Value: []byte("e")}}
	if len(got) != len(want) {
		t.Fatalf("jobs %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Seq != want[i].Seq || got[i].Done != want[i].Done || string(got[i].Value) != string(want[i].Value) {
			t.Fatalf("job %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
