package stream

import (
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"

	"github.com/mvd-project/mvd/message"
)

// The messages this package carries are package message's: the names
// below are the same types and values, kept so that callers of stream
// need not import both.

// SchemaVersion is the message schema this package writes and the only one
// it reads. See docs/messages.md for the versioning rules.
const SchemaVersion = message.SchemaVersion

// ErrUnsupportedSchema is returned by the decoders for a message whose
// "schema" is not SchemaVersion.
var ErrUnsupportedSchema = message.ErrUnsupportedSchema

// ErrBadMessage is returned by the decoders for a message that is not valid
// JSON or breaks the schema.
var ErrBadMessage = message.ErrBadMessage

// Refresh modes reported in RefreshNotification.Mode, as LanceDB names them.
const (
	ModeRebuild     = message.ModeRebuild
	ModeIncremental = message.ModeIncremental
	ModeNoOp        = message.ModeNoOp
)

// OpMultiple is the ChangeSet.Op of a change set that spans more than one
// source commit.
const OpMultiple = message.OpMultiple

// ChangeSet is message.ChangeSet: the payload of mvd.cdc.<source>.
type ChangeSet = message.ChangeSet

// Counts is message.Counts.
type Counts = message.Counts

// RefreshNotification is message.Notification: the payload of
// mvd.view.<view>.refreshed.
type RefreshNotification = message.Notification

// EncodeChangeSet is message.EncodeChangeSet.
func EncodeChangeSet(c *ChangeSet) ([]byte, error) { return message.EncodeChangeSet(c) }

// DecodeChangeSet is message.DecodeChangeSet.
func DecodeChangeSet(data []byte) (*ChangeSet, error) { return message.DecodeChangeSet(data) }

// EncodeRefresh is message.EncodeRefresh.
func EncodeRefresh(n *RefreshNotification) ([]byte, error) { return message.EncodeRefresh(n) }

// DecodeRefresh is message.DecodeRefresh.
func DecodeRefresh(data []byte) (*RefreshNotification, error) { return message.DecodeRefresh(data) }

// NewChangeSet is message.NewChangeSet.
func NewChangeSet(source, incarnation string, from, to uint64, op string, inserted, updated, deleted *roaring64.Bitmap, schemaFingerprint string, committedAt time.Time) *ChangeSet {
	return message.NewChangeSet(source, incarnation, from, to, op, inserted, updated, deleted, schemaFingerprint, committedAt)
}

func orEmpty(b *roaring64.Bitmap) *roaring64.Bitmap {
	if b == nil {
		return roaring64.New()
	}
	return b
}
