package lance_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mvd-project/mvd/lance"
)

// TestHead: a table's Head names the version Latest returns, with its
// timestamp; CheckoutHead returns that version's snapshot even after a
// newer commit, whether the manifest was decoded before (cached) or read
// by Head; Head follows other writers' commits.
func TestHead(t *testing.T) {
	ctx := context.Background()
	tt := createBase(t, "2.2", idRange(0, 10))
	writer := tt.tbl
	reader := wrOpenTable(t, tt.root)
	for i := range 4 {
		want := mustLatest(t, writer)
		h, err := reader.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h.Version != want.Version || !h.Timestamp.Equal(want.Timestamp) || h.Timestamp.IsZero() {
			t.Fatalf("step %d: head %d %v, latest %d %v", i, h.Version, h.Timestamp, want.Version, want.Timestamp)
		}
		// A commit after the Head does not change what it checks out.
		if _, err := writer.Commit(ctx, want, &lance.Commit{SchemaMetadata: map[string]string{"step": itoa(i)}}); err != nil {
			t.Fatal(err)
		}
		s, err := reader.CheckoutHead(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if s.Version != want.Version || !s.Timestamp.Equal(want.Timestamp) || len(s.Fragments) != len(want.Fragments) || s.Schema.Metadata["step"] != want.Schema.Metadata["step"] {
			t.Fatalf("step %d: checked out %d (meta %q), want %d (meta %q)", i, s.Version, s.Schema.Metadata["step"], want.Version, want.Schema.Metadata["step"])
		}
		// The writer's own Head comes from its cache of what it committed.
		wh, err := writer.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := writer.CheckoutHead(ctx, wh)
		if err != nil || ws.Version != want.Version+1 || wh.Version != ws.Version || !wh.Timestamp.Equal(ws.Timestamp) {
			t.Fatalf("step %d: writer head %d %v, snapshot %v, %v", i, wh.Version, wh.Timestamp, ws, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := reader.Head(cancelled); err == nil {
		t.Fatal("Head with a cancelled context succeeded")
	}
}

// TestHeadPastGap: a Head read by a reader that last saw a version a
// cleanup kept, with the versions after it removed, is that version (the
// probe stops at the gap); CheckoutHead refuses it with ErrStaleHead, and
// Latest finds the real latest.
func TestHeadPastGap(t *testing.T) {
	ctx := context.Background()
	_, reader := pastGap(t)
	h, err := reader.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 2 {
		t.Fatalf("head %d, want the probe's 2", h.Version)
	}
	if s, err := reader.CheckoutHead(ctx, h); !errors.Is(err, lance.ErrStaleHead) {
		t.Fatalf("checkout of a head before a gap: %v, %v; want ErrStaleHead", s, err)
	}
	// Split in two: the decode gives version 2 as it is, the check
	// refuses it.
	if s, err := reader.DecodeHead(ctx, h); err != nil || s.Version != 2 {
		t.Fatalf("decode of a head before a gap: %v, %v; want version 2", s, err)
	}
	if err := reader.CheckHead(ctx, h); !errors.Is(err, lance.ErrStaleHead) {
		t.Fatalf("check of a head before a gap: %v; want ErrStaleHead", err)
	}
	if s := mustLatest(t, reader); s.Version != 6 {
		t.Fatalf("latest %d, want 6", s.Version)
	}
	if h, err := reader.Head(ctx); err != nil || h.Version != 6 {
		t.Fatalf("head after the latest: %+v, %v", h, err)
	}
}
