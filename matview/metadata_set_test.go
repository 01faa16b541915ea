package matview

import (
	"context"
	"errors"
	"testing"

	"github.com/mvd-project/mvd/arrowjson"
	"github.com/mvd-project/mvd/internal/lancedbtest"
	"github.com/mvd-project/mvd/vfs"
)

// TestSetMetadataKeepsWatermark: a metadata-only commit on a refreshed view
// (one LanceDB made, one mvd made) is not drift: LanceDB's refresh and
// mvd's right after it are no_op, the keys are visible to both, and a
// later source append refreshes incrementally.
func TestSetMetadataKeepsWatermark(t *testing.T) {
	lancedbtest.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	d := lancedbtest.StartDriver(t, dir)
	must[uint64](t)(d.CreateTable("src", lancedbtest.SourceSchema(), lancedbtest.SourceRows(0, 20, 0)))
	db := openDB(t, dir)
	spec := lancedbtest.ViewSpec{Select: []lancedbtest.Projection{{Name: "id"}, {Name: "amount"}}, Where: "amount > 10"}
	must[lancedbtest.Definition](t)(d.CreateView("ldb", "src", spec))
	must[lancedbtest.RefreshResult](t)(d.Refresh("ldb", lancedbtest.RefreshOptions{}))
	mv := must[*View](t)(db.CreateView(ctx, "mvd", "src", toDefinition(spec)))
	must[*Result](t)(mv.Refresh(ctx, RefreshOptions{}))

	for _, name := range []string{"ldb", "mvd"} {
		t.Run(name, func(t *testing.T) {
			v := must[*View](t)(db.OpenView(ctx, name))
			before := must[*Info](t)(v.Info(ctx))
			got := must[uint64](t)(v.SetMetadata(ctx, map[string]string{"mv.auto_refresh": "interval", "mv.auto_refresh_interval_seconds": "5"}))
			if got != before.Version+1 {
				t.Fatalf("SetMetadata committed version %d, want %d", got, before.Version+1)
			}
			// Setting what is already there commits nothing.
			if again := must[uint64](t)(v.SetMetadata(ctx, map[string]string{"mv.auto_refresh": "interval"})); again != got {
				t.Fatalf("idempotent SetMetadata committed version %d, want %d", again, got)
			}
			after := must[*Info](t)(v.Info(ctx))
			if after.Metadata["mv.auto_refresh"] != "interval" || after.Metadata["mv.auto_refresh_interval_seconds"] != "5" {
				t.Fatalf("metadata after SetMetadata: %v", after.Metadata)
			}
			if after.Watermark.SourceVersion != before.Watermark.SourceVersion || after.Watermark.ViewVersion != got {
				t.Fatalf("watermark %+v after SetMetadata at %d (before %+v)", after.Watermark, got, before.Watermark)
			}
			if after.Metadata[KeyDefinition] != before.Metadata[KeyDefinition] {
				t.Fatal("SetMetadata changed the definition")
			}
			schema := must[arrowjson.Schema](t)(d.Schema(name, 0))
			if schema.Metadata["mv.auto_refresh"] != "interval" {
				t.Fatalf("LanceDB reads metadata %v", schema.Metadata)
			}
			lr := must[lancedbtest.RefreshResult](t)(d.Refresh(name, lancedbtest.RefreshOptions{}))
			if lr.Mode != "no_op" || lr.Version != got {
				t.Fatalf("LanceDB refresh after SetMetadata: %+v, want no_op at %d", lr, got)
			}
			r := must[*Result](t)(v.Refresh(ctx, RefreshOptions{}))
			if r.Mode != ModeNoOp || r.Version != got {
				t.Fatalf("mvd refresh after SetMetadata: %+v, want no_op at %d", r, got)
			}
			// An empty value removes the key.
			must[uint64](t)(v.SetMetadata(ctx, map[string]string{"mv.auto_refresh_interval_seconds": ""}))
			if md := must[*Info](t)(v.Info(ctx)).Metadata; md["mv.auto_refresh_interval_seconds"] != "" || md["mv.auto_refresh"] != "interval" {
				t.Fatalf("metadata after removing a key: %v", md)
			}
			if lr := must[lancedbtest.RefreshResult](t)(d.Refresh(name, lancedbtest.RefreshOptions{})); lr.Mode != "no_op" {
				t.Fatalf("LanceDB refresh after removing a key: %+v", lr)
			}
		})
	}

	// After an append both refresh incrementally; the policy survives.
	must[uint64](t)(d.Add("src", lancedbtest.SourceRows(20, 25, 0)))
	if lr := must[lancedbtest.RefreshResult](t)(d.Refresh("ldb", lancedbtest.RefreshOptions{})); lr.Mode != "incremental" {
		t.Fatalf("LanceDB refresh after append: %+v", lr)
	}
	if err := d.CheckViewAtWatermark("ldb"); err != nil {
		t.Fatal(err)
	}
	r := must[*Result](t)(mv.Refresh(ctx, RefreshOptions{}))
	if r.Mode != ModeIncremental {
		t.Fatalf("mvd refresh after append: %+v", r)
	}
	if md := must[*Info](t)(mv.Info(ctx)).Metadata; md["mv.auto_refresh"] != "interval" {
		t.Fatalf("policy lost by a refresh: %v", md)
	}
}

// TestSetMetadataRefusesReservedKeys: the definition and watermark keys,
// and keys outside mv.*, cannot be set; nothing is committed.
func TestSetMetadataRefusesReservedKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	newGoSource(t, vfs.OS(), dir, "src", 4)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{}))
	before := must[*Info](t)(v.Info(ctx)).Version
	for _, k := range []string{KeyDefinition, KeyIncarnation, KeySourceVersion, KeyViewVersion, "other", "mv."} {
		if _, err := v.SetMetadata(ctx, map[string]string{k: "x"}); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetMetadata(%q): err = %v, want ErrInvalid", k, err)
		}
	}
	if after := must[*Info](t)(v.Info(ctx)).Version; after != before {
		t.Fatalf("a refused SetMetadata committed: version %d -> %d", before, after)
	}
	// A never-refreshed view gets no watermark from SetMetadata.
	must[uint64](t)(v.SetMetadata(ctx, map[string]string{"mv.auto_refresh": "manual"}))
	if wm := must[*Info](t)(v.Info(ctx)).Watermark; wm.Valid {
		t.Fatalf("SetMetadata on an unrefreshed view made a watermark: %+v", wm)
	}
}

// TestCreateWithMetadata: WithMetadata keys land in the create commit
// itself (version 1), empty values are left out, and refused keys fail the
// create before anything is written.
func TestCreateWithMetadata(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	newGoSource(t, vfs.OS(), dir, "src", 4)
	db := openDB(t, dir)
	v := must[*View](t)(db.CreateView(ctx, "v", "src", Definition{},
		WithMetadata(map[string]string{"mv.auto_refresh": "manual", "mv.freshness_target_ms": ""})))
	info := must[*Info](t)(v.Info(ctx))
	if info.Version != 1 {
		t.Fatalf("view version after create with metadata = %d, want 1", info.Version)
	}
	md := mustLatest(t, v).Schema.Metadata
	if md["mv.auto_refresh"] != "manual" {
		t.Fatalf("mv.auto_refresh = %q, want manual", md["mv.auto_refresh"])
	}
	if _, ok := md["mv.freshness_target_ms"]; ok {
		t.Fatalf("an empty WithMetadata value was stored: %v", md)
	}
	if md[KeyDefinition] == "" || md[KeyIncarnation] == "" {
		t.Fatalf("definition keys missing: %v", md)
	}
	for _, k := range []string{KeyDefinition, KeySourceVersion, "other"} {
		_, err := db.CreateView(ctx, "w", "src", Definition{}, WithMetadata(map[string]string{k: "x"}))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("CreateView with key %q: err = %v, want ErrInvalid", k, err)
		}
		if _, err := db.OpenView(ctx, "w"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a refused create left view w behind: %v", err)
		}
	}
}
