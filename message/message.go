package message

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// SchemaVersion is the message schema this package writes and the only one
// it reads. See docs/messages.md for the versioning rules.
const SchemaVersion = 1

// ErrUnsupportedSchema is returned by the decoders for a message whose
// "schema" is not SchemaVersion.
var ErrUnsupportedSchema = errors.New("stream: unsupported message schema")

// ErrBadMessage is returned by the decoders for a message that is not valid
// JSON or breaks the schema (missing field, wrong type, inconsistent value).
var ErrBadMessage = errors.New("stream: bad message")

// Refresh modes reported in Notification.Mode, as LanceDB names them.
const (
	ModeRebuild     = "rebuild"
	ModeIncremental = "incremental"
	ModeNoOp        = "no_op"
)

// OpMultiple is the ChangeSet.Op of a change set that spans more than one
// source commit.
const OpMultiple = "multiple"

// ChangeSet is what happened to a source table's rows between two of its
// versions, in stable row ids: the payload of mvd.cdc.<source>.
//
// A ChangeSet is a plain value; it is not safe for concurrent mutation, and
// the bitmaps belong to whoever holds the value.
type ChangeSet struct {
	// Source is the source table's name (unencoded).
	Source string
	// Incarnation identifies one life of the source: a table dropped and
	// recreated under the same name has a new incarnation, so its version
	// numbers never collide with the old table's.
	Incarnation string
	// From and To are source versions, From < To: the rows below changed
	// after From, up to and including To.
	From, To uint64
	// Op is the Lance operation of commit To when To == From+1 ("append",
	// "delete", "update", "merge", "rewrite", "overwrite", ...), or
	// OpMultiple for a wider range.
	Op string
	// Inserted, Updated and Deleted are stable row ids (see
	// lance.ChangeSet). They are nil when IDsOmitted.
	Inserted, Updated, Deleted *roaring64.Bitmap
	// Counts holds the cardinalities of the three sets; it is always set.
	Counts Counts
	// IDsOmitted says the row ids were too many to fit one message: the
	// consumer must compute the change set from the source itself, exactly
	// as when the stream lacks a change set.
	IDsOmitted bool
	// SchemaFingerprint identifies the source schema at To; a consumer that
	// sees it change may have to rebuild.
	SchemaFingerprint string
	// CommittedAt is when version To was committed (from its manifest).
	CommittedAt time.Time
}

// Counts are the sizes of a change set's row-id sets.
type Counts struct {
	Inserted uint64 `json:"inserted"`
	Updated  uint64 `json:"updated"`
	Deleted  uint64 `json:"deleted"`
}

// MsgID is the JetStream deduplication id (Nats-Msg-Id header) of the
// change set: "<source>:<incarnation>:<from>-<to>", with source and
// incarnation token-encoded (EncodeToken) so that ':' cannot be ambiguous.
func (c *ChangeSet) MsgID() (string, error) {
	src, err := EncodeToken(c.Source)
	if err != nil {
		return "", fmt.Errorf("change set source: %w", err)
	}
	inc, err := EncodeToken(c.Incarnation)
	if err != nil {
		return "", fmt.Errorf("change set incarnation: %w", err)
	}
	return fmt.Sprintf("%s:%s:%d-%d", src, inc, c.From, c.To), nil
}

// changeSetWire is the JSON shape of a ChangeSet. Pointers tell a missing
// field from a zero one.
type changeSetWire struct {
	Schema            *int    `json:"schema"`
	Source            *string `json:"source"`
	Incarnation       *string `json:"incarnation"`
	From              *uint64 `json:"from"`
	To                *uint64 `json:"to"`
	Op                *string `json:"op"`
	Inserted          *string `json:"inserted,omitempty"`
	Updated           *string `json:"updated,omitempty"`
	Deleted           *string `json:"deleted,omitempty"`
	Counts            *Counts `json:"counts"`
	IDsOmitted        bool    `json:"ids_omitted,omitempty"`
	SchemaFingerprint *string `json:"schema_fingerprint"`
	CommittedAt       *string `json:"committed_at"`
}

// EncodeChangeSet validates c and returns its JSON message. Counts are
// recomputed from the bitmaps unless IDsOmitted.
func EncodeChangeSet(c *ChangeSet) ([]byte, error) {
	v := *c
	if !v.IDsOmitted {
		v.Inserted, v.Updated, v.Deleted = orEmpty(v.Inserted), orEmpty(v.Updated), orEmpty(v.Deleted)
		v.Counts = Counts{v.Inserted.GetCardinality(), v.Updated.GetCardinality(), v.Deleted.GetCardinality()}
	}
	if err := v.validate(); err != nil {
		return nil, err
	}
	schema := SchemaVersion
	at := v.CommittedAt.UTC().Format(time.RFC3339Nano)
	w := changeSetWire{
		Schema: &schema, Source: &v.Source, Incarnation: &v.Incarnation, From: &v.From, To: &v.To, Op: &v.Op,
		Counts: &v.Counts, IDsOmitted: v.IDsOmitted, SchemaFingerprint: &v.SchemaFingerprint, CommittedAt: &at,
	}
	if !v.IDsOmitted {
		var err error
		if w.Inserted, err = encodeBitmap(v.Inserted); err != nil {
			return nil, err
		}
		if w.Updated, err = encodeBitmap(v.Updated); err != nil {
			return nil, err
		}
		if w.Deleted, err = encodeBitmap(v.Deleted); err != nil {
			return nil, err
		}
	}
	return json.Marshal(&w)
}

// DecodeChangeSet parses and validates a change-set message. It refuses
// other schema versions (ErrUnsupportedSchema) and anything malformed
// (ErrBadMessage); fields it does not know are ignored, as the versioning
// rules require.
func DecodeChangeSet(data []byte) (*ChangeSet, error) {
	if err := checkSchema(data); err != nil {
		return nil, err
	}
	var w changeSetWire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: change set: %v", ErrBadMessage, err)
	}
	if name := firstMissing("source", w.Source == nil, "incarnation", w.Incarnation == nil, "from", w.From == nil,
		"to", w.To == nil, "op", w.Op == nil, "counts", w.Counts == nil, "schema_fingerprint", w.SchemaFingerprint == nil,
		"committed_at", w.CommittedAt == nil); name != "" {
		return nil, fmt.Errorf("%w: change set lacks %q", ErrBadMessage, name)
	}
	c := &ChangeSet{
		Source: *w.Source, Incarnation: *w.Incarnation, From: *w.From, To: *w.To, Op: *w.Op,
		Counts: *w.Counts, IDsOmitted: w.IDsOmitted, SchemaFingerprint: *w.SchemaFingerprint,
	}
	at, err := parseTime(*w.CommittedAt)
	if err != nil {
		return nil, fmt.Errorf("%w: change set committed_at: %v", ErrBadMessage, err)
	}
	c.CommittedAt = at
	if c.IDsOmitted {
		if w.Inserted != nil || w.Updated != nil || w.Deleted != nil {
			return nil, fmt.Errorf("%w: change set has ids_omitted and row ids", ErrBadMessage)
		}
	} else {
		for _, f := range []struct {
			name string
			b64  *string
			dst  **roaring64.Bitmap
			n    uint64
		}{{"inserted", w.Inserted, &c.Inserted, c.Counts.Inserted}, {"updated", w.Updated, &c.Updated, c.Counts.Updated}, {"deleted", w.Deleted, &c.Deleted, c.Counts.Deleted}} {
			if f.b64 == nil {
				return nil, fmt.Errorf("%w: change set lacks %q", ErrBadMessage, f.name)
			}
			bm, err := decodeBitmap(*f.b64)
			if err != nil {
				return nil, fmt.Errorf("%w: change set %s: %v", ErrBadMessage, f.name, err)
			}
			if got := bm.GetCardinality(); got != f.n {
				return nil, fmt.Errorf("%w: change set %s holds %d row ids, counts say %d", ErrBadMessage, f.name, got, f.n)
			}
			*f.dst = bm
		}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *ChangeSet) validate() error {
	switch {
	case c.Source == "" || !utf8.ValidString(c.Source):
		return fmt.Errorf("%w: change set source %q is empty or not UTF-8", ErrBadMessage, c.Source)
	case c.Incarnation == "" || !utf8.ValidString(c.Incarnation):
		return fmt.Errorf("%w: change set incarnation %q is empty or not UTF-8", ErrBadMessage, c.Incarnation)
	case c.From >= c.To:
		return fmt.Errorf("%w: change set from %d is not before to %d", ErrBadMessage, c.From, c.To)
	case !validOp(c.Op):
		return fmt.Errorf("%w: change set op %q is not a lower-case operation name", ErrBadMessage, c.Op)
	case c.To != c.From+1 && c.Op != OpMultiple:
		return fmt.Errorf("%w: change set %d..%d spans several commits, so op must be %q, not %q", ErrBadMessage, c.From, c.To, OpMultiple, c.Op)
	case c.CommittedAt.IsZero():
		return fmt.Errorf("%w: change set has no committed_at", ErrBadMessage)
	case !utf8.ValidString(c.SchemaFingerprint):
		return fmt.Errorf("%w: change set schema fingerprint is not UTF-8", ErrBadMessage)
	}
	if c.IDsOmitted && (c.Inserted != nil || c.Updated != nil || c.Deleted != nil) {
		return fmt.Errorf("%w: change set omits ids but carries bitmaps", ErrBadMessage)
	}
	if _, err := EncodeToken(c.Source); err != nil {
		return fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	if _, err := EncodeToken(c.Incarnation); err != nil {
		return fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	return nil
}

func validOp(op string) bool {
	if op == "" || len(op) > 64 {
		return false
	}
	for i := 0; i < len(op); i++ {
		if c := op[i]; !('a' <= c && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

// Notification tells subscribers that a view was refreshed (or that
// a refresh failed): the payload of mvd.view.<view>.refreshed.
//
// A Notification is a plain value with no internal synchronization.
type Notification struct {
	// Schema is SchemaVersion; EncodeRefresh sets it.
	Schema int `json:"schema"`
	// View and Source are the view's and its source's names (unencoded).
	View   string `json:"view"`
	Source string `json:"source"`
	// Mode is ModeRebuild, ModeIncremental or ModeNoOp; it may be empty
	// only when Error is set (the refresh failed before choosing a mode).
	Mode string `json:"mode"`
	// RowsWritten is the number of rows the refresh wrote into the view.
	RowsWritten uint64 `json:"rows_written"`
	// SourceVersion is the source version the view reflects after the
	// refresh (its watermark).
	SourceVersion uint64 `json:"source_version"`
	// Version is the view's version after the refresh (unchanged for
	// no_op and for failures).
	Version uint64 `json:"version"`
	// LagMS is the time from the source commit to the view commit, in
	// milliseconds.
	LagMS float64 `json:"lag_ms"`
	// CommittedAt is when the view commit happened (for failures: when
	// the refresh gave up).
	CommittedAt time.Time `json:"committed_at"`
	// Error is set when the refresh failed; the view stays as it was.
	Error string `json:"error,omitempty"`
	// SourceCommittedAt is the commit time (from its manifest) of the
	// oldest source version the refresh brought into the view: lag_ms is
	// CommittedAt minus it. Zero (left out) when unknown or for failures.
	SourceCommittedAt time.Time `json:"source_committed_at,omitzero"`
	// Recovered says the notification was published when the daemon
	// started again, for a view commit made before it stopped (killed
	// between the commit and its notification).
	Recovered bool `json:"recovered,omitempty"`
	// Retries is the failed attempts in a row before this one; Cleared,
	// on the success that ends them, their error.
	Retries int    `json:"retries,omitempty"`
	Cleared string `json:"cleared,omitempty"`
	// Instance is the --instance-id of the mvd serve that committed the
	// refresh or, for a failure, that tried it. Empty (left out) when
	// unknown: a recovered notification (the commit may be another
	// instance's) or a publisher older than the field.
	Instance string `json:"instance,omitempty"`
}

// refreshWire is the decoding shape of a Notification.
type refreshWire struct {
	Schema        *int     `json:"schema"`
	View          *string  `json:"view"`
	Source        *string  `json:"source"`
	Mode          *string  `json:"mode"`
	RowsWritten   *uint64  `json:"rows_written"`
	SourceVersion *uint64  `json:"source_version"`
	Version       *uint64  `json:"version"`
	LagMS         *float64 `json:"lag_ms"`
	CommittedAt   *string  `json:"committed_at"`
	Error         *string  `json:"error"`

	SourceCommittedAt *string `json:"source_committed_at"`
	Recovered         bool    `json:"recovered"`
	Retries           int     `json:"retries"`
	Cleared           string  `json:"cleared"`
	Instance          string  `json:"instance"`
}

// EncodeRefresh validates n and returns its JSON message, with "schema"
// set to SchemaVersion and committed_at in UTC.
func EncodeRefresh(n *Notification) ([]byte, error) {
	v := *n
	v.Schema = SchemaVersion
	v.CommittedAt = v.CommittedAt.UTC()
	if !v.SourceCommittedAt.IsZero() {
		v.SourceCommittedAt = v.SourceCommittedAt.UTC()
	}
	if err := v.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(&v)
}

// DecodeRefresh parses and validates a refresh notification, refusing
// other schema versions (ErrUnsupportedSchema) and malformed messages
// (ErrBadMessage); unknown fields are ignored.
func DecodeRefresh(data []byte) (*Notification, error) {
	if err := checkSchema(data); err != nil {
		return nil, err
	}
	var w refreshWire
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("%w: refresh notification: %v", ErrBadMessage, err)
	}
	if name := firstMissing("view", w.View == nil, "source", w.Source == nil, "mode", w.Mode == nil,
		"rows_written", w.RowsWritten == nil, "source_version", w.SourceVersion == nil, "version", w.Version == nil,
		"lag_ms", w.LagMS == nil, "committed_at", w.CommittedAt == nil); name != "" {
		return nil, fmt.Errorf("%w: refresh notification lacks %q", ErrBadMessage, name)
	}
	n := &Notification{
		Schema: *w.Schema, View: *w.View, Source: *w.Source, Mode: *w.Mode, RowsWritten: *w.RowsWritten,
		SourceVersion: *w.SourceVersion, Version: *w.Version, LagMS: *w.LagMS,
	}
	if w.Error != nil {
		n.Error = *w.Error
		if n.Error == "" {
			return nil, fmt.Errorf("%w: refresh notification has an empty error", ErrBadMessage)
		}
	}
	at, err := parseTime(*w.CommittedAt)
	if err != nil {
		return nil, fmt.Errorf("%w: refresh notification committed_at: %v", ErrBadMessage, err)
	}
	n.CommittedAt = at
	if w.SourceCommittedAt != nil {
		if n.SourceCommittedAt, err = parseTime(*w.SourceCommittedAt); err != nil {
			return nil, fmt.Errorf("%w: refresh notification source_committed_at: %v", ErrBadMessage, err)
		}
	}
	n.Recovered, n.Retries, n.Cleared, n.Instance = w.Recovered, w.Retries, w.Cleared, w.Instance
	if err := n.validate(); err != nil {
		return nil, err
	}
	return n, nil
}

func (n *Notification) validate() error {
	switch {
	case n.View == "" || !utf8.ValidString(n.View):
		return fmt.Errorf("%w: refresh notification view %q is empty or not UTF-8", ErrBadMessage, n.View)
	case n.Source == "" || !utf8.ValidString(n.Source):
		return fmt.Errorf("%w: refresh notification source %q is empty or not UTF-8", ErrBadMessage, n.Source)
	case !utf8.ValidString(n.Error) || !utf8.ValidString(n.Instance):
		return fmt.Errorf("%w: refresh notification error or instance is not UTF-8", ErrBadMessage)
	case math.IsNaN(n.LagMS) || math.IsInf(n.LagMS, 0) || n.LagMS < 0:
		return fmt.Errorf("%w: refresh notification lag_ms %v is not a non-negative number", ErrBadMessage, n.LagMS)
	case n.CommittedAt.IsZero():
		return fmt.Errorf("%w: refresh notification has no committed_at", ErrBadMessage)
	}
	switch n.Mode {
	case ModeRebuild, ModeIncremental, ModeNoOp:
	case "":
		if n.Error == "" {
			return fmt.Errorf("%w: refresh notification has no mode and no error", ErrBadMessage)
		}
	default:
		return fmt.Errorf("%w: refresh notification mode %q is not rebuild, incremental or no_op", ErrBadMessage, n.Mode)
	}
	if _, err := EncodeToken(n.View); err != nil {
		return fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	return nil
}

// checkSchema reads only the "schema" member, so that a message of another
// version is refused as such before its other fields are judged.
func checkSchema(data []byte) error {
	var head struct {
		Schema *json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	if head.Schema == nil {
		return fmt.Errorf("%w: no \"schema\" field", ErrBadMessage)
	}
	var v int
	if err := json.Unmarshal(*head.Schema, &v); err != nil {
		return fmt.Errorf("%w: \"schema\" is %s, not an integer", ErrBadMessage, *head.Schema)
	}
	if v != SchemaVersion {
		return fmt.Errorf("%w: schema %d (this build reads %d)", ErrUnsupportedSchema, v, SchemaVersion)
	}
	return nil
}

// firstMissing takes (name, missing) pairs and returns the first missing
// name, or "".
func firstMissing(pairs ...any) string {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1].(bool) {
			return pairs[i].(string)
		}
	}
	return ""
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if t.IsZero() {
		return time.Time{}, errors.New("zero time")
	}
	return t, nil
}

func orEmpty(b *roaring64.Bitmap) *roaring64.Bitmap {
	if b == nil {
		return roaring64.New()
	}
	return b
}

// encodeBitmap writes the portable roaring64 serialization, base64 (std,
// padded).
func encodeBitmap(b *roaring64.Bitmap) (*string, error) {
	raw, err := b.ToBytes()
	if err != nil {
		return nil, fmt.Errorf("serialize row ids: %w", err)
	}
	s := base64.StdEncoding.EncodeToString(raw)
	return &s, nil
}

// decodeBitmap inverts encodeBitmap. The roaring reader is not hardened
// against hostile input, so a panic inside it becomes an error, and the
// whole input must be consumed.
func decodeBitmap(s string) (bm *roaring64.Bitmap, err error) {
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("base64: %v", err)
	}
	// The reader allocates as many buckets as the header claims; each takes
	// at least a 4-byte key and an 8-byte roaring32 header.
	if len(raw) < 8 {
		return nil, errors.New("roaring bitmap: shorter than its header")
	}
	if n := binary.LittleEndian.Uint64(raw); n > uint64(len(raw)-8)/12 {
		return nil, fmt.Errorf("roaring bitmap: claims %d buckets in %d bytes", n, len(raw))
	}
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("corrupt roaring bitmap: %v", r)
		}
	}()
	bm = roaring64.New()
	rd := bytes.NewReader(raw)
	if _, err := bm.ReadFrom(rd); err != nil {
		return nil, fmt.Errorf("roaring bitmap: %v", err)
	}
	if rd.Len() != 0 {
		return nil, fmt.Errorf("roaring bitmap: %d trailing bytes", rd.Len())
	}
	if err := bm.Validate(); err != nil {
		return nil, fmt.Errorf("roaring bitmap: %v", err)
	}
	return bm, nil
}

// NewChangeSet builds a change set for the versions from..to of a source,
// with Op set to op for a single step and to OpMultiple for a wider range.
// Nil bitmaps are empty sets.
func NewChangeSet(source, incarnation string, from, to uint64, op string, inserted, updated, deleted *roaring64.Bitmap, schemaFingerprint string, committedAt time.Time) *ChangeSet {
	if to != from+1 {
		op = OpMultiple
	}
	return &ChangeSet{
		Source: source, Incarnation: incarnation, From: from, To: to, Op: op,
		Inserted: orEmpty(inserted), Updated: orEmpty(updated), Deleted: orEmpty(deleted),
		Counts:            Counts{card(inserted), card(updated), card(deleted)},
		SchemaFingerprint: schemaFingerprint, CommittedAt: committedAt,
	}
}

func card(b *roaring64.Bitmap) uint64 {
	if b == nil {
		return 0
	}
	return b.GetCardinality()
}
