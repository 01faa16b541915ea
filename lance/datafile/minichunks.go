package datafile

import (
	"encoding/binary"
	"fmt"

	"github.com/mvd-project/mvd/lance/internal/pb/enc21pb"
)

// miniChunk is one chunk of a mini-block page: its bytes in the data
// buffer and the values it holds.
type miniChunk struct{ off, size, first, count uint64 }

// parseChunks reads a mini-block page's chunk metadata (buffer 0) and
// returns its chunks with the metadata word size.
func parseChunks(l *enc21pb.MiniBlockLayout, src bufSource) ([]miniChunk, int, error) {
	meta, err := src.all(0)
	if err != nil {
		return nil, 0, err
	}
	wordSize := 2
	if l.HasLargeChunk {
		wordSize = 4
	}
	if len(meta)%wordSize != 0 {
		return nil, 0, fmt.Errorf("chunk metadata of %d bytes is not a whole number of %d-byte words", len(meta), wordSize)
	}
	nChunks := len(meta) / wordSize
	chunks := make([]miniChunk, nChunks)
	var seen, off uint64
	for c := range chunks {
		var w uint64
		if wordSize == 2 {
			w = uint64(binary.LittleEndian.Uint16(meta[2*c:]))
		} else {
			w = uint64(binary.LittleEndian.Uint32(meta[4*c:]))
		}
		size := ((w >> 4) + 1) * 8
		count := uint64(1) << (w & 0xf)
		if c == nChunks-1 {
			if seen > l.NumItems {
				return nil, 0, fmt.Errorf("chunks hold more than the page's %d values", l.NumItems)
			}
			count = l.NumItems - seen
		}
		chunks[c] = miniChunk{off, size, seen, count}
		seen += count
		off += size
	}
	if seen != l.NumItems {
		return nil, 0, fmt.Errorf("chunks hold %d values, page says %d", seen, l.NumItems)
	}
	if off > src.size(1) {
		return nil, 0, fmt.Errorf("chunks need %d bytes, the data buffer has %d", off, src.size(1))
	}
	return chunks, wordSize, nil
}

// loadDictionary reads and decodes a mini-block page's dictionary
// (buffer 2).
func loadDictionary(l *enc21pb.MiniBlockLayout, src bufSource, lim limits) (block, error) {
	db, err := src.all(2)
	if err != nil {
		return block{}, err
	}
	dict, err := decodeComp(l.Dictionary, [][]byte{db}, l.NumDictionaryItems, false, lim)
	if err != nil {
		return block{}, fmt.Errorf("dictionary: %w", err)
	}
	return dict, nil
}

// flatChunks checks a mini-block page without repetition (one value per
// row, numRows of them) and returns its chunks and word size.
func flatChunks(l *enc21pb.MiniBlockLayout, src bufSource, numRows uint64, lim limits) ([]miniChunk, int, error) {
	if err := checkMiniBlock(l, src, lim); err != nil {
		return nil, 0, err
	}
	if l.NumItems != numRows {
		return nil, 0, fmt.Errorf("page of %d rows has %d values and no repetition", numRows, l.NumItems)
	}
	return parseChunks(l, src)
}
