package lance

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mvd-project/mvd/lance/internal/pb/tablepb"
	"github.com/mvd-project/mvd/vfs"
)

// testFrameManifest frames a Manifest protobuf as a manifest file with no
// index or transaction section.
func testFrameManifest(t *testing.T, pb *tablepb.Manifest) []byte {
	t.Helper()
	pb.TransactionSection, pb.IndexSection = nil, nil
	body, err := proto.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	out = append(out, body...)
	out = binary.LittleEndian.AppendUint64(out, 0)
	out = binary.LittleEndian.AppendUint16(out, manifestMajor)
	out = binary.LittleEndian.AppendUint16(out, manifestMinor)
	return append(out, manifestMagic...)
}

// TestExternalSequences moves every fragment's inline row ids and version
// sequences into an external file (what Lance does above ~200 KB; LanceDB
// 0.39 never did it in our experiments) and checks the table reads the same.
func TestExternalSequences(t *testing.T) {
	src := filepath.Join("..", "testdata", "fixtures", "history_stable_v21.lance")
	tbl, err := Open(context.Background(), vfs.OS(), src)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tbl.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := collectRowMeta(t, tbl, m)

	root := t.TempDir()
	for _, d := range []string{versionsDir, deletionsDir, "seq"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	for _, f := range m.Fragments {
		if f.Deletion != nil {
			b, err := os.ReadFile(filepath.Join(src, deletionsDir, f.Deletion.fileName(f.ID)))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(root, deletionsDir, f.Deletion.fileName(f.ID)), b, 0o644)
		}
	}
	pb := proto.Clone(m.pb).(*tablepb.Manifest)
	var blob []byte
	ext := func(b []byte) *tablepb.ExternalFile {
		blob = append(blob, 0xEE, 0xEE, 0xEE) // junk between entries: offsets must be honoured
		e := &tablepb.ExternalFile{Path: "seq/all.bin", Offset: uint64(len(blob)), Size: uint64(len(b))}
		blob = append(blob, b...)
		return e
	}
	for _, fp := range pb.GetFragments() {
		fp.RowIdSequence = &tablepb.DataFragment_ExternalRowIds{ExternalRowIds: ext(fp.GetInlineRowIds())}
		fp.CreatedAtVersionSequence = &tablepb.DataFragment_ExternalCreatedAtVersions{ExternalCreatedAtVersions: ext(fp.GetInlineCreatedAtVersions())}
		fp.LastUpdatedAtVersionSequence = &tablepb.DataFragment_ExternalLastUpdatedAtVersions{ExternalLastUpdatedAtVersions: ext(fp.GetInlineLastUpdatedAtVersions())}
	}
	os.WriteFile(filepath.Join(root, "seq", "all.bin"), blob, 0o644)
	os.WriteFile(filepath.Join(root, versionsDir, manifestName(m.Version, NamingV2)), testFrameManifest(t, pb), 0o644)

	ext2, err := Open(context.Background(), vfs.OS(), root)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ext2.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := collectRowMeta(t, ext2, m2)
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// A sequence pointing past the end of its file is corrupt, not short.
	pb.Fragments[0].RowIdSequence = &tablepb.DataFragment_ExternalRowIds{ExternalRowIds: &tablepb.ExternalFile{Path: "seq/all.bin", Offset: uint64(len(blob)) - 2, Size: 10}}
	os.WriteFile(filepath.Join(root, versionsDir, manifestName(m.Version, NamingV2)), testFrameManifest(t, pb), 0o644)
	m3, err := ext2.Checkout(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m3.FragmentRows(context.Background(), m3.Fragments[0]); err == nil {
		t.Fatal("external sequence beyond its file was accepted")
	}
}

func collectRowMeta(t *testing.T, tbl *Table, m *Snapshot) []RowMeta {
	t.Helper()
	var out []RowMeta
	if err := m.ScanRowMeta(context.Background(), func(r RowMeta) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no rows")
	}
	return out
}
