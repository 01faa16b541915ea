package matview

import (
	"strconv"
	"strings"

	"github.com/mvd-project/mvd/lance"
)

// Schema metadata keys of a view, as LanceDB 0.39 writes them.
const (
	KeyDefinition      = "mv.definition"
	KeyIncarnation     = "mv.incarnation"
	KeySourceVersion   = "mv.source_version"
	KeySourceVersionTS = "mv.source_version_ts"
	KeyRefreshedAtMs   = "mv.refreshed_at_ms"
	KeyViewVersion     = "mv.view_version"
)

// KeyPrefix starts every view metadata key. Keys of this prefix that mvd
// does not know (such as auto-refresh policies added later) are kept as
// they are by every refresh, which only sets the watermark keys.
const KeyPrefix = "mv."

// Watermark is what a view's last refresh recorded: the source version it
// reflects and the view version that refresh created.
type Watermark struct {
	// Valid is false when the view was never refreshed (or its stamp is
	// unreadable); the other fields are then zero.
	Valid bool
	// SourceVersion is the source version the view reflects.
	SourceVersion uint64
	// SourceVersionTS is that source version's commit time in ns since
	// the epoch: it identifies the source incarnation.
	SourceVersionTS int64
	// RefreshedAtMs is the wall clock of the refresh, in ms.
	RefreshedAtMs int64
	// ViewVersion is the view version the refresh committed.
	ViewVersion uint64
}

// watermarkOf reads the watermark keys of a view's schema metadata.
func watermarkOf(md map[string]string) Watermark {
	sv, err1 := strconv.ParseUint(strings.TrimSpace(md[KeySourceVersion]), 10, 64)
	vv, err2 := strconv.ParseUint(strings.TrimSpace(md[KeyViewVersion]), 10, 64)
	if err1 != nil || err2 != nil {
		return Watermark{}
	}
	ts, _ := strconv.ParseInt(strings.TrimSpace(md[KeySourceVersionTS]), 10, 64)
	at, _ := strconv.ParseInt(strings.TrimSpace(md[KeyRefreshedAtMs]), 10, 64)
	return Watermark{Valid: true, SourceVersion: sv, SourceVersionTS: ts, RefreshedAtMs: at, ViewVersion: vv}
}

// nextStamp describes the watermark commit expected after one stamping w:
// the next view version, and values for the next source version (the
// width of w's plus one), its timestamp and the refresh time as long as
// w's. The view's table builds it ahead (lance.Commit.Next).
func (w Watermark) nextStamp() *lance.NextMetadata {
	return &lance.NextMetadata{
		Fixed: map[string]string{KeyViewVersion: strconv.FormatUint(w.ViewVersion+1, 10)},
		Variable: map[string]int{
			KeySourceVersion:   len(strconv.FormatUint(w.SourceVersion+1, 10)),
			KeySourceVersionTS: len(strconv.FormatInt(w.SourceVersionTS, 10)),
			KeyRefreshedAtMs:   len(strconv.FormatInt(w.RefreshedAtMs, 10)),
		},
	}
}

// stamp is the metadata a refresh commit writes.
func (w Watermark) stamp() map[string]string {
	return map[string]string{
		KeySourceVersion:   strconv.FormatUint(w.SourceVersion, 10),
		KeySourceVersionTS: strconv.FormatInt(w.SourceVersionTS, 10),
		KeyRefreshedAtMs:   strconv.FormatInt(w.RefreshedAtMs, 10),
		KeyViewVersion:     strconv.FormatUint(w.ViewVersion, 10),
	}
}
