package checkpoint

import (
	"encoding/binary"
	"testing"
	"time"
)

// BenchmarkRecordRefresh is the checkpoint cost of one refresh's record
// written alone (the daemon's history writer batches them).
func BenchmarkRecordRefresh(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := uint64(i + 1)
		if err := s.RecordRefreshes(b.Context(), []RefreshRecord{{View: "v", Mode: "incremental", SourceVersion: v, ViewVersion: v, StartedAt: now, FinishedAt: now}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteSourceState is one write of a view's kept source state
// after one more source commit, for a source of 5,000 fragments: a state
// shaped like the real one (a header that changes with every version,
// then one ~120-byte entry per fragment, the new one last; every tenth
// commit also changes an entry in the middle, as a delete does).
// state-bytes/op is the state's size, written-bytes/op what the store
// wrote of it (chunks it lacked and the index).
func BenchmarkWriteSourceState(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const fragments = 5000
	entries := make([][]byte, fragments)
	for i := range entries {
		entries[i] = randomBytes(int64(i), 120)
	}
	state := func(version int) []byte {
		out := binary.AppendUvarint([]byte("header"), uint64(version))
		for _, e := range entries {
			out = append(out, e...)
		}
		return out
	}
	keepAndWrite := func(version int) int { return keepAndFlush(b, s, "v", uint64(version), state(version)) }
	keepAndWrite(0)
	var written, size int
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		entries = append(entries, randomBytes(int64(fragments+i), 120))
		if i%10 == 0 {
			mid := entries[len(entries)/2]
			mid[7] ^= 0xff
		}
		size += len(state(i))
		written += keepAndWrite(i)
	}
	b.ReportMetric(float64(size)/float64(b.N), "state-bytes/op")
	b.ReportMetric(float64(written)/float64(b.N), "written-bytes/op")
}
