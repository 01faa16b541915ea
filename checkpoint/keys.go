package checkpoint

import (
	"encoding/binary"
	"errors"
)

// Key layout (format 1). View names are arbitrary strings, so wherever
// something follows the name it is length-prefixed (uvarint), which keeps
// one view's keys from ever being a prefix-match of another's.
//
//	"format"                          → format version
//	'p' view                          → a watermark cache older builds wrote (deleted with its view)
//	'm' view                          → history bounds: next seq, oldest seq (2×uint64 BE)
//	'h' len(view) view seq(uint64 BE) → RefreshRecord (JSON)
//	'b' len(view) view key            → blob
//	'j' seq(uint64 BE)                → refresh job: done flag (1 byte), record (opaque)
//	's' view                          → kept source state, whole (older builds; read, replaced on the next write)
//	'i' view                          → kept source state's chunk index (stateIndex)
//	'c' len(view) view id(16 bytes)   → a chunk of a kept source state (chunk.go)
const (
	tagProgress = 'p'
	tagHistMeta = 'm'
	tagHistory  = 'h'
	tagBlob     = 'b'
	tagJob      = 'j'
	tagState    = 's'
	tagIndex    = 'i'
	tagChunk    = 'c'
)

var errEmptyView = errors.New("checkpoint: empty view name")

func progressKey(view string) []byte { return append([]byte{tagProgress}, view...) }
func histMetaKey(view string) []byte { return append([]byte{tagHistMeta}, view...) }

func sourceStateKey(view string) []byte { return append([]byte{tagState}, view...) }
func stateIndexKey(view string) []byte  { return append([]byte{tagIndex}, view...) }

func chunkKey(view string, id chunkID) []byte { return append(viewPrefix(tagChunk, view), id[:]...) }

// viewPrefix is tag, len(view), view.
func viewPrefix(tag byte, view string) []byte {
	k := make([]byte, 0, 1+binary.MaxVarintLen64+len(view)+8)
	k = append(k, tag)
	k = binary.AppendUvarint(k, uint64(len(view)))
	return append(k, view...)
}

func historyKey(view string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(viewPrefix(tagHistory, view), seq)
}

func blobKey(view, key string) []byte { return append(viewPrefix(tagBlob, view), key...) }

func jobKey(seq uint64) []byte { return binary.BigEndian.AppendUint64([]byte{tagJob}, seq) }
