package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/mvd-project/mvd/lance/internal/pb/enc20pb"
)

// decodePage20 decodes one 2.0 page. dt selects how dictionaries decode:
// a dictionary-typed field indexes its items directly, a string field uses
// 1-based indices with 0 for null.
func (r *Reader) decodePage20(c, p int, dt arrow.DataType) (*page20, error) {
	e, bufs, err := r.encoding20(c, p)
	if err != nil {
		return nil, err
	}
	n := r.cols[c].Pages[p].Length
	if n > r.limits.maxItems {
		return nil, fmt.Errorf("page claims %d rows", n)
	}
	return decode20(e, bufs, n, dt, r.limits)
}

func decode20(e *enc20pb.ArrayEncoding, bufs [][]byte, n uint64, dt arrow.DataType, lim limits) (*page20, error) {
	switch x := e.GetArrayEncoding().(type) {
	case *enc20pb.ArrayEncoding_Nullable:
		switch nn := x.Nullable.GetNullability().(type) {
		case *enc20pb.Nullable_NoNulls:
			return decode20(nn.NoNulls.GetValues(), bufs, n, dt, lim)
		case *enc20pb.Nullable_AllNulls:
			pd := &page20{n: n, valid: make([]bool, n), nulls: int(n), vals: block{n: n}}
			if _, ok := dt.(*arrow.FixedSizeListType); ok {
				pd.dim = uint64(dt.(*arrow.FixedSizeListType).Len())
			}
			return pd, nil
		case *enc20pb.Nullable_SomeNulls:
			vb, err := flat20(nn.SomeNulls.GetValidity(), bufs, n)
			if err != nil {
				return nil, fmt.Errorf("validity: %w", err)
			}
			if vb.bits != 1 {
				return nil, fmt.Errorf("validity of %d bits", vb.bits)
			}
			pd, err := decode20(nn.SomeNulls.GetValues(), bufs, n, dt, lim)
			if err != nil {
				return nil, err
			}
			pd.valid = make([]bool, n)
			pd.nulls = 0
			for i := range pd.valid {
				pd.valid[i] = vb.data[i/8]>>(i%8)&1 == 1
				if !pd.valid[i] {
					pd.nulls++
				}
			}
			return pd, nil
		}
		return nil, fmt.Errorf("nullable encoding without a kind")
	case *enc20pb.ArrayEncoding_Flat:
		b, err := flat20(e, bufs, n)
		if err != nil {
			return nil, err
		}
		return &page20{n: n, vals: b}, nil
	case *enc20pb.ArrayEncoding_Binary:
		return binary20(x.Binary, bufs, n, lim)
	case *enc20pb.ArrayEncoding_Dictionary:
		return dictionary20(x.Dictionary, bufs, n, dt, lim)
	case *enc20pb.ArrayEncoding_FixedSizeList:
		fsl := x.FixedSizeList
		dim := uint64(fsl.GetDimension())
		if dim == 0 || n > lim.maxItems/dim {
			return nil, fmt.Errorf("fixed-size list of %d x %d items", n, dim)
		}
		items, err := decode20(fsl.GetItems(), bufs, n*dim, nil, lim)
		if err != nil {
			return nil, fmt.Errorf("fixed-size list items: %w", err)
		}
		if items.vals.offsets != nil || items.vals.bits%8 != 0 {
			return nil, fmt.Errorf("fixed-size list of %d-bit items", items.vals.bits)
		}
		pd := &page20{n: n, vals: block{n: n, bits: items.vals.bits * dim, data: items.vals.data}, dim: dim}
		if items.valid != nil {
			vb := (dim + 7) / 8
			pd.itemValid = make([]byte, n*vb)
			for i, v := range items.valid {
				if v {
					r, k := uint64(i)/dim, uint64(i)%dim
					pd.itemValid[r*vb+k/8] |= 1 << (k % 8)
				}
			}
		}
		return pd, nil
	case *enc20pb.ArrayEncoding_List:
		l := x.List
		ob, err := decode20(l.GetOffsets(), bufs, n, nil, lim)
		if err != nil {
			return nil, fmt.Errorf("list offsets: %w", err)
		}
		if ob.valid != nil || ob.vals.bits != 64 {
			return nil, fmt.Errorf("list offsets of %d bits", ob.vals.bits)
		}
		adj := l.GetNullOffsetAdjustment()
		pd := &page20{n: n, ends: make([]uint64, n)}
		for i := uint64(0); i < n; i++ {
			v := binary.LittleEndian.Uint64(ob.vals.data[8*i:])
			if adj > 0 && v >= adj {
				if pd.valid == nil {
					pd.valid = make([]bool, n)
					for k := range pd.valid {
						pd.valid[k] = true
					}
				}
				pd.valid[i] = false
				pd.nulls++
				v -= adj
			}
			pd.ends[i] = v
		}
		return pd, nil
	case *enc20pb.ArrayEncoding_Struct:
		return &page20{n: n}, nil
	case nil:
		return nil, unsupportedErr("array encoding is empty or of a kind newer than this reader")
	}
	return nil, unsupportedErr("array encoding %T is not supported", e.GetArrayEncoding())
}

// flat20 reads n flat values from a page buffer.
func flat20(e *enc20pb.ArrayEncoding, bufs [][]byte, n uint64) (block, error) {
	f := e.GetFlat()
	if f == nil {
		return block{}, fmt.Errorf("want flat encoding, got %T", e.GetArrayEncoding())
	}
	if f.GetCompression() != nil {
		return block{}, unsupportedErr("flat buffer with %q compression is not supported", f.GetCompression().GetScheme())
	}
	if f.GetBuffer().GetBufferType() != enc20pb.Buffer_page {
		return block{}, unsupportedErr("flat values in a %v buffer are not supported", f.GetBuffer().GetBufferType())
	}
	i := f.GetBuffer().GetBufferIndex()
	if int(i) >= len(bufs) {
		return block{}, fmt.Errorf("flat values in buffer %d of %d", i, len(bufs))
	}
	return flatBlock(bufs[i], n, f.GetBitsPerValue())
}

// binary20 decodes end offsets (null rows carry end+null_adjustment) and
// the bytes they index.
func binary20(b *enc20pb.Binary, bufs [][]byte, n uint64, lim limits) (*page20, error) {
	ib, err := decode20(b.GetIndices(), bufs, n, nil, lim)
	if err != nil {
		return nil, fmt.Errorf("binary indices: %w", err)
	}
	if ib.valid != nil || ib.vals.bits != 64 {
		return nil, fmt.Errorf("binary indices of %d bits", ib.vals.bits)
	}
	bb, err := decode20(b.GetBytes(), bufs, 0, nil, lim)
	if err != nil {
		return nil, fmt.Errorf("binary bytes: %w", err)
	}
	f := b.GetBytes().GetFlat()
	if f == nil || f.GetBitsPerValue() != 8 {
		return nil, fmt.Errorf("binary bytes are not flat bytes")
	}
	data := bufs[f.GetBuffer().GetBufferIndex()]
	_ = bb
	adj := b.GetNullAdjustment()
	pd := &page20{n: n, vals: block{n: n, offsets: make([]uint64, n+1), data: data}}
	for i := uint64(0); i < n; i++ {
		v := binary.LittleEndian.Uint64(ib.vals.data[8*i:])
		if adj > 0 && v >= adj {
			if pd.valid == nil {
				pd.valid = make([]bool, n)
				for k := range pd.valid {
					pd.valid[k] = true
				}
			}
			pd.valid[i] = false
			pd.nulls++
			v -= adj
		}
		pd.vals.offsets[i+1] = v
	}
	if err := checkOffsets(pd.vals.offsets, n, len(data)); err != nil {
		return nil, fmt.Errorf("binary: %w", err)
	}
	pd.vals.data = data[:pd.vals.offsets[n]]
	return pd, nil
}

// dictionary20 resolves dictionary indices against their items.
func dictionary20(d *enc20pb.Dictionary, bufs [][]byte, n uint64, dt arrow.DataType, lim limits) (*page20, error) {
	items, err := decode20(d.GetItems(), bufs, uint64(d.GetNumDictionaryItems()), nil, lim)
	if err != nil {
		return nil, fmt.Errorf("dictionary items: %w", err)
	}
	idx, err := decode20(d.GetIndices(), bufs, n, nil, lim)
	if err != nil {
		return nil, fmt.Errorf("dictionary indices: %w", err)
	}
	if idx.valid != nil || idx.vals.offsets != nil {
		return nil, fmt.Errorf("dictionary indices with nulls or variable width")
	}
	_, direct := dt.(*arrow.DictionaryType)
	sz := idx.vals.bits / 8
	if sz == 0 || sz > 8 || idx.vals.bits%8 != 0 {
		return nil, fmt.Errorf("dictionary indices of %d bits", idx.vals.bits)
	}
	pd := &page20{n: n}
	if items.vals.offsets == nil {
		return nil, unsupportedErr("dictionary of fixed-width items is not supported")
	}
	pd.vals = block{n: n, offsets: make([]uint64, 1, n+1)}
	markNull := func(i uint64) {
		if pd.valid == nil {
			pd.valid = make([]bool, n)
			for k := range pd.valid {
				pd.valid[k] = true
			}
		}
		pd.valid[i] = false
		pd.nulls++
	}
	for i := uint64(0); i < n; i++ {
		var j uint64
		for k := uint64(0); k < sz; k++ {
			j |= uint64(idx.vals.data[i*sz+k]) << (8 * k)
		}
		if !direct {
			// Plain string columns: 0 is null, items are 1-based.
			if j == 0 {
				markNull(i)
				pd.vals.offsets = append(pd.vals.offsets, uint64(len(pd.vals.data)))
				continue
			}
			j--
		}
		if j >= items.vals.n {
			return nil, fmt.Errorf("dictionary index %d of row %d is past the %d items", j, i, items.vals.n)
		}
		if items.valid != nil && !items.valid[j] {
			markNull(i)
		} else {
			v := items.vals.value(j)
			if uint64(len(pd.vals.data))+uint64(len(v)) > lim.maxBytes {
				return nil, fmt.Errorf("dictionary values expand past %d bytes", lim.maxBytes)
			}
			pd.vals.data = append(pd.vals.data, v...)
		}
		pd.vals.offsets = append(pd.vals.offsets, uint64(len(pd.vals.data)))
	}
	return pd, nil
}
