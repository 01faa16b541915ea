package datafile

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

func fsstTable(syms []string) []byte {
	t := make([]byte, fsstTableSize)
	binary.LittleEndian.PutUint64(t, fsstMagic<<32|1<<24|uint64(len(syms)))
	for i, s := range syms {
		copy(t[8+8*i:], s)
		t[8+8*len(syms)+i] = byte(len(s))
	}
	return t
}

func TestFSST(t *testing.T) {
	d, err := newFSST(fsstTable([]string{"hello", " ", "world!!!"}))
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.appendDecoded(nil, []byte{0, 1, 2, 255, 'x', 1})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "hello world!!!x " {
		t.Fatalf("got %q", got)
	}
	for _, bad := range [][]byte{{3}, {255}} {
		if _, err := d.appendDecoded(nil, bad); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
	// Encoder switched off and the all-zero table both pass bytes through.
	off := fsstTable(nil)
	binary.LittleEndian.PutUint64(off, fsstMagic<<32)
	for _, tb := range [][]byte{off, make([]byte, fsstTableSize)} {
		d, err := newFSST(tb)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := d.appendDecoded(nil, []byte{0, 255, 7}); !bytes.Equal(got, []byte{0, 255, 7}) {
			t.Fatalf("pass-through gave %v", got)
		}
	}
	badMagic := fsstTable([]string{"a"})
	badMagic[7] = 0
	if _, err := newFSST(badMagic); err == nil {
		t.Fatal("bad magic accepted")
	}
	if _, err := newFSST(make([]byte, 10)); err == nil {
		t.Fatal("short table accepted")
	}
}

func TestLZ4(t *testing.T) {
	src := bytes.Repeat([]byte("lance lance lance "), 100)
	dst := make([]byte, lz4.CompressBlockBound(len(src)))
	n, err := lz4.CompressBlock(src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	framed := binary.LittleEndian.AppendUint32(nil, uint32(len(src)))
	framed = append(framed, dst[:n]...)
	got, err := lz4Block(framed)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("lz4 round trip: %v", err)
	}
	huge := append(binary.LittleEndian.AppendUint32(nil, 1<<30), dst[:n]...)
	if _, err := lz4Block(huge); err == nil {
		t.Fatal("implausible size accepted")
	}
	wrong := append(binary.LittleEndian.AppendUint32(nil, uint32(len(src)-1)), dst[:n]...)
	if _, err := lz4Block(wrong); err == nil {
		t.Fatal("wrong size accepted")
	}
}

func TestZstd(t *testing.T) {
	src := bytes.Repeat([]byte("zstd!"), 1000)
	enc, _ := zstd.NewWriter(nil)
	frame := enc.EncodeAll(src, nil)
	enc.Close()
	got, err := zstdBuffer(frame)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("plain frame: %v", err)
	}
	prefixed := append(binary.LittleEndian.AppendUint64(nil, uint64(len(src))), frame...)
	if got, err = zstdBuffer(prefixed); err != nil || !bytes.Equal(got, src) {
		t.Fatalf("size-prefixed: %v", err)
	}
	short := append(binary.LittleEndian.AppendUint64(nil, 10), frame...)
	if _, err := zstdBuffer(short); err == nil {
		t.Fatal("output past the size prefix accepted")
	}
	if _, err := zstdBuffer([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}); err == nil {
		t.Fatal("garbage accepted")
	}
}

func flat(bits uint64) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Flat{Flat: &enc21pb.Flat{BitsPerValue: bits}}}
}

func TestRLE(t *testing.T) {
	e := &enc21pb.Rle{Values: flat(32), RunLengths: flat(8)}
	vals := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 7), 9)
	runs := []byte{3, 2}
	want := []uint32{7, 7, 7, 9, 9}
	check := func(b block, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			if got := binary.LittleEndian.Uint32(b.data[4*i:]); got != w {
				t.Fatalf("value %d: %d, want %d", i, got, w)
			}
		}
	}
	check(rleDecode(e, [][]byte{vals, runs}, 5, true, limits{maxItems: 100}))
	blockForm := append(binary.LittleEndian.AppendUint64(nil, uint64(len(vals))), vals...)
	blockForm = append(blockForm, runs...)
	check(rleDecode(e, [][]byte{blockForm}, 5, false, limits{maxItems: 100}))
	if _, err := rleDecode(e, [][]byte{vals, runs}, 6, true, limits{maxItems: 100}); err == nil {
		t.Fatal("short runs accepted")
	}
	if _, err := rleDecode(e, [][]byte{vals, runs}, 4, true, limits{maxItems: 100}); err == nil {
		t.Fatal("long runs accepted")
	}
	if _, err := rleDecode(e, [][]byte{vals[:4], runs}, 5, true, limits{maxItems: 100}); err == nil {
		t.Fatal("missing run value accepted")
	}
}

func TestVariable(t *testing.T) {
	// Mini-block form: offsets from the start of the buffer.
	var b []byte
	for _, o := range []uint32{12, 15, 15} {
		b = binary.LittleEndian.AppendUint32(b, o)
	}
	b = append(b, "abc"...)
	blk, err := variableMini(b, 2, 32)
	if err != nil || string(blk.value(0)) != "abc" || len(blk.value(1)) != 0 {
		t.Fatalf("mini: %v %+v", err, blk)
	}
	// Block form: bits, start of bytes, offsets, bytes.
	var c []byte
	c = binary.LittleEndian.AppendUint32(c, 32)
	c = binary.LittleEndian.AppendUint32(c, 20)
	for _, o := range []uint32{0, 2, 5} {
		c = binary.LittleEndian.AppendUint32(c, o)
	}
	c = append(c, "xyzzy"...)
	blk, err = variableBlock(c, 2, 32)
	if err != nil || string(blk.value(0)) != "xy" || string(blk.value(1)) != "zzy" {
		t.Fatalf("block: %v %+v", err, blk)
	}
	bad := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(bad[4:], 99)
	if _, err := variableMini(bad, 2, 32); err == nil {
		t.Fatal("offset past the data accepted")
	}
}
