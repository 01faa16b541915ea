package checkpoint

import (
	"testing"
	"time"
)

// BenchmarkRecordRefresh is the checkpoint cost a refresh pays: progress
// and history in one synced transaction.
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
		if _, err := s.RecordRefresh(b.Context(), Progress{View: "v", SourceVersion: v, ViewVersion: v},
			RefreshRecord{View: "v", Mode: "incremental", SourceVersion: v, ViewVersion: v, StartedAt: now, FinishedAt: now}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutProgress is one synced progress write.
func BenchmarkPutProgress(b *testing.B) {
	s, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.PutProgress(b.Context(), Progress{View: "v", SourceVersion: uint64(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
