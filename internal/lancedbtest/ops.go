package lancedbtest

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/mvd-project/mvd/arrowjson"
)

// OpKind is one kind of source operation of the differential op-sequence
// test: each maps to one LanceDB write (one source version; optimize may
// make more).
type OpKind int

// The source operations, in the order of issue 10's list.
const (
	Append              OpKind = iota + 1 // add new rows
	Delete                                // delete by predicate
	UpdateAcrossFilter                    // amount = 100 - amount: rows cross amount filters both ways
	UpdateUnreadColumn                    // score = score + 1: a column filtered views do not read
	MergeUpsert                           // merge_insert on id: update matched, insert the rest
	MergeDeleteBySource                   // merge_insert on id: delete rows the data does not match
	Compact                               // optimize: compaction (may commit more than one version)
	AddColumn                             // add a computed column (a Lance Merge commit)
	Overwrite                             // replace every row (a Lance Overwrite commit)
)

// OpKinds lists every OpKind.
var OpKinds = []OpKind{Append, Delete, UpdateAcrossFilter, UpdateUnreadColumn, MergeUpsert, MergeDeleteBySource, Compact, AddColumn, Overwrite}

var opNames = map[OpKind]string{
	Append: "append", Delete: "delete", UpdateAcrossFilter: "update_across_filter",
	UpdateUnreadColumn: "update_unread_column", MergeUpsert: "merge_upsert",
	MergeDeleteBySource: "merge_delete_by_source", Compact: "compact",
	AddColumn: "add_column", Overwrite: "overwrite",
}

func (k OpKind) String() string {
	if n, ok := opNames[k]; ok {
		return n
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// ParseOpKind is the inverse of OpKind.String.
func ParseOpKind(s string) (OpKind, error) {
	for k, n := range opNames {
		if n == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown op kind %q", s)
}

// Op is one concrete source operation.
type Op struct {
	Kind   OpKind
	Rows   []Record          // Append, MergeUpsert, Overwrite: rows written; MergeDeleteBySource: the rows kept
	Where  string            // Delete, UpdateAcrossFilter, UpdateUnreadColumn
	Set    map[string]string // UpdateAcrossFilter, UpdateUnreadColumn: column → SQL
	Column Column            // AddColumn
}

func (o Op) String() string {
	switch o.Kind {
	case Delete:
		return fmt.Sprintf("delete(%s)", o.Where)
	case UpdateAcrossFilter, UpdateUnreadColumn:
		return fmt.Sprintf("%s(%s)", o.Kind, o.Where)
	case Append, MergeUpsert, MergeDeleteBySource, Overwrite:
		return fmt.Sprintf("%s(%d rows)", o.Kind, len(o.Rows))
	case AddColumn:
		return fmt.Sprintf("add_column(%s)", o.Column.Name)
	}
	return o.Kind.String()
}

// Apply performs op on table with LanceDB and returns the new version.
func (d *Driver) Apply(table string, op Op) (uint64, error) {
	switch op.Kind {
	case Append:
		return d.Add(table, op.Rows)
	case Delete:
		return d.Delete(table, op.Where)
	case UpdateAcrossFilter, UpdateUnreadColumn:
		r, err := d.Update(table, op.Where, op.Set)
		return r.Version, err
	case MergeUpsert:
		r, err := d.Upsert(table, "id", op.Rows)
		return r.Version, err
	case MergeDeleteBySource:
		r, err := d.DeleteBySource(table, "id", op.Rows)
		return r.Version, err
	case Compact:
		return d.Optimize(table)
	case AddColumn:
		return d.AddColumns(table, op.Column)
	case Overwrite:
		return d.Overwrite(table, op.Rows)
	}
	return 0, fmt.Errorf("apply: unknown op kind %v", op.Kind)
}

// SourceSchema is the standard source of the op-sequence tests: id int64
// not null, name utf8, kind utf8 (a, b, c, d), amount float64 (0–99.99),
// tags list<utf8> (0–3 items), score int32. name, kind and amount hold some
// nulls, so filters meet three-valued logic.
func SourceSchema() arrowjson.Schema {
	return arrowjson.Schema{Fields: []arrowjson.Field{
		{Name: "id", Type: "int64"},
		{Name: "name", Type: "utf8", Nullable: true},
		{Name: "kind", Type: "utf8", Nullable: true},
		{Name: "amount", Type: "float64", Nullable: true},
		{Name: "tags", Type: "list", Nullable: true, Children: []arrowjson.Field{{Name: "item", Type: "utf8", Nullable: true}}},
		{Name: "score", Type: "int32", Nullable: true},
	}}
}

// SourceRow is the standard source row for id under variant (0 for
// original rows; merges and overwrites use their step number so that the
// values they write differ): a pure function of its arguments.
func SourceRow(id int64, variant int) Record {
	h := mix64(uint64(id), uint64(variant))
	r := Record{"id": id, "score": int32(h % 1000)}
	if id%7 == 3 {
		r["name"] = nil
	} else {
		r["name"] = fmt.Sprintf("%s-%d", []string{"ann", "bob", "cy", "dee", "Eve"}[h>>8%5], id)
	}
	if id%11 == 5 {
		r["kind"] = nil
	} else {
		r["kind"] = []string{"a", "b", "c", "d"}[h>>16%4]
	}
	if h>>24%13 == 0 {
		r["amount"] = nil
	} else {
		r["amount"] = float64(h>>32%10000) / 100
	}
	tags := make([]any, h>>48%4)
	for i := range tags {
		tags[i] = []string{"x", "y", "z"}[(h>>(i*4))%3]
	}
	r["tags"] = tags
	return r
}

// SourceRows returns SourceRow for ids [from, to).
func SourceRows(from, to int64, variant int) []Record {
	out := make([]Record, 0, to-from)
	for id := from; id < to; id++ {
		out = append(out, SourceRow(id, variant))
	}
	return out
}

func mix64(x, variant uint64) uint64 {
	x ^= (variant + 1) * 0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// OpGen turns op kinds into concrete, deterministic ops over the standard
// source: the same kinds from the same start always give the same ops.
// Not safe for concurrent use.
type OpGen struct {
	// NextID is the next id an append or upsert gives a new row.
	NextID int64
	// Step counts the ops generated so far (1 for the first).
	Step int
}

// InitialRows is the number of rows NewOpGen assumes the source starts
// with (SourceRows(0, InitialRows, 0)).
const InitialRows = 12

// NewOpGen returns a generator for a source created with
// SourceRows(0, InitialRows, 0).
func NewOpGen() *OpGen { return &OpGen{NextID: InitialRows} }

// Next returns the concrete op for kind at the next step.
func (g *OpGen) Next(kind OpKind) Op {
	g.Step++
	s := g.Step
	switch kind {
	case Append:
		rows := SourceRows(g.NextID, g.NextID+5, 0)
		g.NextID += 5
		return Op{Kind: Append, Rows: rows}
	case Delete:
		return Op{Kind: Delete, Where: fmt.Sprintf("id %% 4 = %d", s%4)}
	case UpdateAcrossFilter:
		return Op{Kind: UpdateAcrossFilter, Where: fmt.Sprintf("id %% 3 = %d", s%3), Set: map[string]string{"amount": "100 - amount"}}
	case UpdateUnreadColumn:
		return Op{Kind: UpdateUnreadColumn, Where: fmt.Sprintf("id %% 2 = %d", s%2), Set: map[string]string{"score": "score + 1"}}
	case MergeUpsert:
		// Four of the newest ids (matched unless deleted) and two new ones.
		rows := SourceRows(g.NextID-4, g.NextID+2, s)
		g.NextID += 2
		return Op{Kind: MergeUpsert, Rows: rows}
	case MergeDeleteBySource:
		var keep []Record
		for id := int64(0); id < g.NextID; id++ {
			if id%6 != int64(s%6) {
				keep = append(keep, Record{"id": id})
			}
		}
		return Op{Kind: MergeDeleteBySource, Rows: keep}
	case Compact:
		return Op{Kind: Compact}
	case AddColumn:
		return Op{Kind: AddColumn, Column: Column{Name: fmt.Sprintf("extra%d", s), SQL: "score * 2"}}
	case Overwrite:
		rows := SourceRows(g.NextID, g.NextID+6, s)
		g.NextID += 6
		return Op{Kind: Overwrite, Rows: rows}
	}
	return Op{Kind: kind}
}

// Ops returns the concrete ops of a sequence of kinds from a fresh
// generator.
func Ops(kinds []OpKind) []Op {
	g := NewOpGen()
	out := make([]Op, len(kinds))
	for i, k := range kinds {
		out[i] = g.Next(k)
	}
	return out
}

// Sequences returns every sequence of 1..maxLen kinds drawn from kinds, in
// lexicographic order of length then position.
func Sequences(kinds []OpKind, maxLen int) [][]OpKind {
	var out [][]OpKind
	var rec func(prefix []OpKind)
	rec = func(prefix []OpKind) {
		if len(prefix) > 0 {
			out = append(out, append([]OpKind(nil), prefix...))
		}
		if len(prefix) == maxLen {
			return
		}
		for _, k := range kinds {
			rec(append(prefix, k))
		}
	}
	rec(nil)
	return out
}

// SampleSequences returns n sequences of minLen..maxLen kinds, drawn
// uniformly from kinds with a PRNG seeded by seed: the same seed gives the
// same sequences.
func SampleSequences(seed uint64, n, minLen, maxLen int, kinds []OpKind) [][]OpKind {
	r := rand.New(rand.NewPCG(seed, 0x6d76645f73657173))
	out := make([][]OpKind, n)
	for i := range out {
		seq := make([]OpKind, minLen+r.IntN(maxLen-minLen+1))
		for j := range seq {
			seq[j] = kinds[r.IntN(len(kinds))]
		}
		out[i] = seq
	}
	return out
}

// SequenceName is a test name for a sequence: kinds joined by "+".
func SequenceName(kinds []OpKind) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k.String()
	}
	return strings.Join(parts, "+")
}
