package cluster

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BucketSuffix names the bucket under a database's subject prefix:
// stream.Subjects.Bucket(BucketSuffix), "<PREFIX>_CLUSTER".
const BucketSuffix = "cluster"

// BucketConfig is the configuration of the bucket named bucket: ttl is
// the lease TTL (every key lapses ttl after its last write). Replicas is
// left 0 for stream.Conn.EnsureKeyValue to choose (3 on a cluster).
// The bucket is on file storage: a memory bucket of a single server is
// gone once the server restarts, and the instances would be left without
// one (JetStream does not sync every write to disk, so a renewal is not a
// disk sync).
func BucketConfig(bucket string, ttl time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "mvd serve instances and their view and source leases",
		History:     1,
		TTL:         ttl,
		Storage:     jetstream.FileStorage,
	}
}

// EncodeKey makes name one KV key token: ASCII letters, digits, '_' and
// '-' stay; every other byte is "=" and two lower-case hex digits.
func EncodeKey(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02x", c)
		}
	}
	return b.String()
}

// errBadKey is returned by DecodeKey for a token EncodeKey cannot make.
var errBadKey = errors.New("cluster: malformed key token")

// DecodeKey inverts EncodeKey.
func DecodeKey(tok string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(tok); i++ {
		if tok[i] != '=' {
			b.WriteByte(tok[i])
			continue
		}
		if i+2 >= len(tok) {
			return "", fmt.Errorf("%w: %q", errBadKey, tok)
		}
		c, err := hex.DecodeString(tok[i+1 : i+3])
		if err != nil {
			return "", fmt.Errorf("%w: %q: %w", errBadKey, tok, err)
		}
		b.Write(c)
		i += 2
	}
	return b.String(), nil
}

const (
	memberPrefix = "member."
	leasePrefix  = "lease."
)

// memberKey is the key of instance id.
func memberKey(id string) string { return memberPrefix + EncodeKey(id) }

// leaseKey is the key of the lease of (kind, name).
func leaseKey(kind Kind, name string) string {
	return leasePrefix + string(kind) + "." + EncodeKey(name)
}

// parseLeaseKey inverts leaseKey.
func parseLeaseKey(key string) (Kind, string, bool) {
	rest, ok := strings.CutPrefix(key, leasePrefix)
	if !ok {
		return "", "", false
	}
	kind, tok, ok := strings.Cut(rest, ".")
	if !ok {
		return "", "", false
	}
	name, err := DecodeKey(tok)
	if err != nil {
		return "", "", false
	}
	return Kind(kind), name, true
}

// Member is what an instance says of itself in its member key (and what
// a refused duplicate is told of the live one).
type Member struct {
	// ID is the instance id (--instance-id).
	ID string `json:"id"`
	// Host, PID, AdminAddr and StartedAt say where it runs.
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	AdminAddr string    `json:"admin_addr"`
	StartedAt time.Time `json:"started_at"`
	// Nonce tells this run of the instance from another with the same ID.
	Nonce string `json:"nonce"`
}

// String names the member for a log line or a refusal.
func (m Member) String() string {
	return fmt.Sprintf("instance %s (host %s, pid %d, admin %s)", m.ID, m.Host, m.PID, m.AdminAddr)
}

// Lease is the value of a lease key.
type Lease struct {
	// Holder is the instance id holding it.
	Holder string `json:"holder"`
	// Since is when the holder took it.
	Since time.Time `json:"since"`
}
