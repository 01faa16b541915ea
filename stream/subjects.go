package stream

import (
	"fmt"
	"strings"
)

// DefaultPrefix is the first subject token of every mvd subject.
const DefaultPrefix = "mvd"

// Subjects names mvd's subjects and streams under one prefix, so that
// several databases can share one NATS account with different prefixes.
// The zero value uses DefaultPrefix. A Subjects is an immutable value.
type Subjects struct {
	// Prefix is one subject token of A-Z, a-z, 0-9, '_' and '-'; empty
	// means DefaultPrefix.
	Prefix string
}

func (s Subjects) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

func (s Subjects) validate() error {
	p := s.prefix()
	for i := 0; i < len(p); i++ {
		if !plainTokenByte(p[i]) {
			return fmt.Errorf("stream: subject prefix %q must be one token of letters, digits, '_' and '-'", p)
		}
	}
	return nil
}

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
