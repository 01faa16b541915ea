package stream

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// DefaultPrefix is the first subject token of every mvd subject.
const DefaultPrefix = "mvd"

// MaxPrefixLen bounds a subject prefix, so that stream names built on it
// ("<PREFIX>_VIEWS") stay short in JetStream's store and monitoring.
const MaxPrefixLen = 32

// Subjects names mvd's subjects and streams under one prefix, so that
// several databases can share one NATS account with different prefixes.
// The zero value uses DefaultPrefix. A Subjects is an immutable value.
type Subjects struct {
	// Prefix is one subject token of a-z, 0-9, '_' and '-' (lower case:
	// stream names upper-case it, so "a" and "A" would share streams);
	// empty means DefaultPrefix.
	Prefix string
}

// PrefixFor is the default subject prefix of a database on an external
// NATS server: "mvd_" and the first 8 hex digits of the SHA-256 of db (an
// absolute path or a URI), so that two databases sharing a server never
// share subjects, streams or durable consumers, and every instance
// serving one database derives the same prefix without configuration.
func PrefixFor(db string) string {
	sum := sha256.Sum256([]byte(db))
	return DefaultPrefix + "_" + hex.EncodeToString(sum[:4])
}

// CheckPrefix reports whether p can be a subject prefix: one NATS subject
// token of a-z, 0-9, '_' and '-', at most MaxPrefixLen bytes.
func CheckPrefix(p string) error {
	if p == "" {
		return fmt.Errorf("stream: empty subject prefix")
	}
	if len(p) > MaxPrefixLen {
		return fmt.Errorf("stream: subject prefix %q is longer than %d bytes", p, MaxPrefixLen)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !plainTokenByte(c) || (c >= 'A' && c <= 'Z') {
			return fmt.Errorf("stream: subject prefix %q must be one subject token of lower-case letters, digits, '_' and '-' (byte %q at %d is not)", p, c, i)
		}
	}
	return nil
}

func (s Subjects) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

// PrefixInUse is the prefix in use (DefaultPrefix when none was set).
func (s Subjects) PrefixInUse() string { return s.prefix() }

func (s Subjects) validate() error { return CheckPrefix(s.prefix()) }

// ChangeSets is the subject of a source's change sets:
// "<prefix>.cdc.<EncodeToken(source)>".
func (s Subjects) ChangeSets(source string) (string, error) {
	tok, err := EncodeToken(source)
	if err != nil {
		return "", fmt.Errorf("change-set subject of source %q: %w", source, err)
	}
	return s.prefix() + ".cdc." + tok, nil
}

// Refreshed is the subject of a view's refresh notifications:
// "<prefix>.view.<EncodeToken(view)>.refreshed".
func (s Subjects) Refreshed(view string) (string, error) {
	tok, err := EncodeToken(view)
	if err != nil {
		return "", fmt.Errorf("refresh subject of view %q: %w", view, err)
	}
	return s.prefix() + ".view." + tok + ".refreshed", nil
}

// AllChangeSets matches every source's change sets: "<prefix>.cdc.*".
func (s Subjects) AllChangeSets() string { return s.prefix() + ".cdc.*" }

// AllRefreshed matches every view's refresh notifications, including views
// created later: "<prefix>.view.*.refreshed".
func (s Subjects) AllRefreshed() string { return s.prefix() + ".view.*.refreshed" }

// ViewOf returns the view named by a refresh subject.
func (s Subjects) ViewOf(subject string) (string, error) {
	head, tail := s.prefix()+".view.", ".refreshed"
	if !strings.HasPrefix(subject, head) || !strings.HasSuffix(subject, tail) || len(subject) <= len(head)+len(tail) {
		return "", fmt.Errorf("stream: %q is not a refresh subject", subject)
	}
	return DecodeToken(subject[len(head) : len(subject)-len(tail)])
}

// SourceOf returns the source named by a change-set subject.
func (s Subjects) SourceOf(subject string) (string, error) {
	head := s.prefix() + ".cdc."
	if !strings.HasPrefix(subject, head) {
		return "", fmt.Errorf("stream: %q is not a change-set subject", subject)
	}
	return DecodeToken(subject[len(head):])
}

// ChangeSetStream is the JetStream stream holding change sets:
// upper-cased prefix + "_CDC" ("MVD_CDC").
func (s Subjects) ChangeSetStream() string { return strings.ToUpper(s.prefix()) + "_CDC" }

// RefreshStream is the JetStream stream keeping recent refresh
// notifications: upper-cased prefix + "_VIEWS" ("MVD_VIEWS").
func (s Subjects) RefreshStream() string { return strings.ToUpper(s.prefix()) + "_VIEWS" }

// Bucket is the name of a JetStream key-value bucket of this prefix:
// upper-cased prefix + "_" + upper-cased name ("MVD_JOBS" for "jobs"), so
// that two databases with different prefixes share no bucket. name is made
// of letters, digits, '_' and '-', as bucket names must be.
func (s Subjects) Bucket(name string) string {
	return strings.ToUpper(s.prefix()) + "_" + strings.ToUpper(name)
}
