package checkpoint

import (
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
