package lance

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/mvd-project/mvd/vfs"
)

// NextMetadata describes a commit the caller expects to make next, right
// after the one it is set on (Commit.Next): one that upserts schema
// metadata only, with Fixed's values and values of the given lengths for
// Variable's keys. After the commit is published the table builds and
// encodes that next commit in the background, and StagePrebuilt then
// stages it by writing the values into the encoding: no building and no
// encoding on the critical path of the next commit, which a caller that
// commits a watermark after every source version makes most of the time.
type NextMetadata struct {
	// Fixed are keys and their values, known now.
	Fixed map[string]string
	// Variable are keys whose values are given to StagePrebuilt, each of
	// exactly this length in bytes.
	Variable map[string]int
}

// prebuilt is a metadata-only commit built and encoded ahead on a base
// version, with placeholders where its variable values go: the next
// commit as NextMetadata described it.
type prebuilt struct {
	base   *Manifest // the version it builds on (sameManifest)
	b      *builtCommit
	naming ManifestNaming
	fixed  map[string]string
	// head is the file up to the manifest section: the index section, if
	// any, and the transaction, as frameManifest lays them out; body is
	// the manifest message without its timestamp, which is appended when
	// the commit is staged (a field may come in any order).
	head, body []byte
	slots      []prebuiltSlot
}

// prebuiltSlot is where a variable key's value goes: at headAt in head and
// bodyAt in body, width bytes each.
type prebuiltSlot struct {
	key            string
	width          int
	headAt, bodyAt int
}

// nextCommit holds the commit being built ahead, or built.
//
// A nextCommit is safe for concurrent use.
type nextCommit struct {
	mu   sync.Mutex
	done chan struct{} // closed when the build in progress ends; nil if none
	p    *prebuilt
}

// build builds the next commit on base as n describes, in the background,
// in place of any other.
func (nc *nextCommit) build(t *Table, base *Manifest, naming ManifestNaming, n *NextMetadata) {
	nc.mu.Lock()
	prev := nc.done
	done := make(chan struct{})
	nc.done, nc.p = done, nil
	nc.mu.Unlock()
	go func() {
		defer close(done)
		if prev != nil {
			<-prev // one build at a time, the newest last
		}
		p, err := t.prebuild(base, naming, n)
		if err != nil {
			return // the next commit is built when it is made
		}
		nc.mu.Lock()
		if nc.done == done {
			nc.p = p
		}
		nc.mu.Unlock()
	}()
}

// take returns the commit built on base for metadata md, if it is built,
// and forgets it; it does not wait for a build in progress.
func (nc *nextCommit) take(base *Manifest, md map[string]string) *prebuilt {
	nc.mu.Lock()
	defer nc.mu.Unlock()
	p := nc.p
	if p == nil || !sameManifest(p.base, base) || !p.fits(md) {
		return nil
	}
	nc.p = nil
	return p
}

// sameManifest reports whether a and b are the same version's manifest:
// the one a commit returned, or the same file decoded again (a handle
// whose cache did not have it yet).
func sameManifest(a, b *Manifest) bool {
	return a == b || a != nil && b != nil && a.Version == b.Version && bytes.Equal(a.raw, b.raw)
}

// wait waits for the build in progress, if any.
func (nc *nextCommit) wait() {
	nc.mu.Lock()
	done := nc.done
	nc.mu.Unlock()
	if done != nil {
		<-done
	}
}

// placeholder is a value of width bytes made of c.
func placeholder(c byte, width int) string { return strings.Repeat(string(c), width) }

// prebuild builds and encodes the commit n describes on base, and finds
// where each variable value lies in the encoding: the value bytes are
// the only bytes in which two encodings differing in that value alone
// (deterministic, so alike everywhere else) differ.
func (t *Table) prebuild(base *Manifest, naming ManifestNaming, n *NextMetadata) (*prebuilt, error) {
	md := maps.Clone(n.Fixed)
	if md == nil {
		md = map[string]string{}
	}
	for k, w := range n.Variable {
		if _, dup := n.Fixed[k]; dup || w <= 0 {
			return nil, fmt.Errorf("next commit: key %q: fixed twice or width %d", k, w)
		}
		md[k] = placeholder('a', w)
	}
	// Prepared, DeferHint and Next are the staged commit's (StagePrebuilt).
	c := &Commit{SchemaMetadata: md, Rebase: RebaseNever}
	if err := validateCommit(c); err != nil {
		return nil, err
	}
	batch := vfs.NewSyncBatch(t.fs)
	defer batch.Abort()
	b, err := t.buildCommit(base, c, newUUID(), time.Time{}, batch)
	if err != nil {
		return nil, err
	}
	if len(b.written) > 0 {
		return nil, fmt.Errorf("next commit: a metadata commit wrote files")
	}
	b.manifest.Timestamp = nil
	p := &prebuilt{base: base, b: b, naming: naming, fixed: maps.Clone(n.Fixed)}
	if p.head, p.body, err = p.encode(); err != nil {
		return nil, err
	}
	for k, w := range n.Variable {
		if err := p.setValue(k, placeholder('b', w)); err != nil {
			return nil, err
		}
		head, body, err := p.encode()
		if err != nil {
			return nil, err
		}
		if err := p.setValue(k, placeholder('a', w)); err != nil {
			return nil, err
		}
		hAt, ok1 := diffRun(p.head, head, w)
		bAt, ok2 := diffRun(p.body, body, w)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("next commit: key %q: its value is not where it was expected in the encoding", k)
		}
		p.slots = append(p.slots, prebuiltSlot{key: k, width: w, headAt: hAt, bodyAt: bAt})
	}
	return p, nil
}

// encode frames the commit's sections up to the manifest section
// (frameHead) and encodes the manifest message, deterministically.
func (p *prebuilt) encode() (head, body []byte, err error) {
	opts := proto.MarshalOptions{Deterministic: true}
	txn, err := opts.Marshal(p.b.txn)
	if err != nil {
		return nil, nil, fmt.Errorf("encode transaction: %w", err)
	}
	head = frameHead(p.b.manifest, p.b.indexSection, txn)
	if body, err = marshalManifestWith(p.b.manifest, p.b.base, opts); err != nil {
		return nil, nil, fmt.Errorf("encode manifest: %w", err)
	}
	return head, body, nil
}

// diffRun returns where a and b, of one length, differ: exactly one run
// of width bytes.
func diffRun(a, b []byte, width int) (int, bool) {
	if len(a) != len(b) {
		return 0, false
	}
	at := -1
	for i := range a {
		if a[i] != b[i] {
			at = i
			break
		}
	}
	if at < 0 || at+width > len(a) || !bytes.Equal(a[at+width:], b[at+width:]) {
		return 0, false
	}
	for i := at; i < at+width; i++ {
		if a[i] == b[i] {
			return 0, false
		}
	}
	return at, true
}

// setValue sets key's value in the commit's manifest and transaction
// messages.
func (p *prebuilt) setValue(key, value string) error {
	p.b.manifest.SchemaMetadata[key] = []byte(value)
	uc := p.b.txn.GetUpdateConfig()
	for _, e := range uc.GetSchemaMetadataUpdates().GetUpdateEntries() {
		if e.GetKey() == key {
			e.Value = &value
			return nil
		}
	}
	return fmt.Errorf("next commit: key %q is not in its transaction", key)
}

// fits reports whether md is the metadata the commit was built for:
// its fixed values, and a value of the built width for every variable key.
func (p *prebuilt) fits(md map[string]string) bool {
	if len(md) != len(p.fixed)+len(p.slots) {
		return false
	}
	for k, v := range p.fixed {
		if w, ok := md[k]; !ok || w != v {
			return false
		}
	}
	for _, s := range p.slots {
		if v, ok := md[s.key]; !ok || len(v) != s.width {
			return false
		}
	}
	return true
}

// StagePrebuilt stages c on base as Stage does, from the encoding built
// ahead after base was committed (Commit.Next): c's metadata values are
// written into it and the timestamp is added. c upserts schema metadata
// only and refuses rebases; its Prepared, DeferHint, DeferSync and Next apply as in
// Stage. ok is false, and nothing is done, when no commit was built on
// base (by this handle) or c is not the commit it was built for; the
// caller then stages c itself.
func (t *Table) StagePrebuilt(ctx context.Context, base *Snapshot, c *Commit) (sc *StagedCommit, ok bool, err error) {
	if base == nil || base.table != t || !metadataOnly(c) {
		return nil, false, nil
	}
	if err := t.deferredErr(); err != nil {
		return nil, true, t.wrap(base.Version+1, "stage commit", err)
	}
	md := c.SchemaMetadata
	// A build still running (the refresh came right after the commit
	// before it) is waited for: finishing it costs less than the same
	// build and encoding done here again.
	t.next.wait()
	p := t.next.take(base.Manifest, md)
	if p == nil {
		return nil, false, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, true, t.wrap(base.Version+1, "stage commit", err)
	}
	now := time.Now()
	head := bytes.Clone(p.head)
	body := bytes.Clone(p.body)
	for _, s := range p.slots {
		v := md[s.key]
		copy(head[s.headAt:], v)
		copy(body[s.bodyAt:], v)
		if err := p.setValue(s.key, v); err != nil {
			return nil, true, t.wrap(base.Version+1, "stage commit", err)
		}
	}
	p.b.manifest.Timestamp = timestamppb.New(now)
	body = appendTimestampField(body, now)
	b := p.b
	b.prepared, b.deferHint, b.deferSync, b.next = c.Prepared, c.DeferHint, c.DeferSync, c.Next
	st := c.Prepared.take()
	raw, unpadded := finishManifest(head, body, st.Size())
	b.batch = vfs.NewSyncBatch(t.fs)
	defer b.batch.Abort() // on the paths that fail before the sync
	sv, err := t.stageManifest(b, p.naming, st, raw, unpadded)
	if err != nil {
		return nil, true, t.wrap(base.Version+1, "stage commit", err)
	}
	return &StagedCommit{t: t, c: c, readVersion: base.Version, sv: sv}, true, nil
}

// metadataOnly reports whether c upserts schema metadata and does nothing
// else, refusing rebases.
func metadataOnly(c *Commit) bool {
	return c != nil && len(c.SchemaMetadata) > 0 && c.Rebase == RebaseNever &&
		c.DeleteRowIDs == nil && len(c.Fragments) == 0 && !c.Overwrite && c.Schema == nil &&
		c.DataFileVersion == "" && len(c.DeleteSchemaMetadata) == 0 && c.InsertedRows == nil && c.Pending == nil
}

// appendTimestampField appends the manifest's timestamp field (7) for ts,
// encoded as proto.Marshal encodes timestamppb.New(ts).
func appendTimestampField(b []byte, ts time.Time) []byte {
	var msg []byte
	if s := ts.Unix(); s != 0 {
		msg = protowire.AppendVarint(protowire.AppendTag(msg, 1, protowire.VarintType), uint64(s))
	}
	if n := ts.Nanosecond(); n != 0 {
		msg = protowire.AppendVarint(protowire.AppendTag(msg, 2, protowire.VarintType), uint64(n))
	}
	b = protowire.AppendTag(b, manifestTimestampField, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}
