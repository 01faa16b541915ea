package stream

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mvd-project/mvd/message"
)

func TestEncodeToken(t *testing.T) {
	for _, tc := range []struct{ name, token string }{
		{"events", "events"},
		{"my_table-2", "my_table-2"},
		{"my.table", "my%2Etable"},
		{"a b", "a%20b"},
		{"*", "%2A"},
		{">", "%3E"},
		{"50%", "50%25"},
		{"a/b\\c", "a%2Fb%5Cc"},
		{"é", "%C3%A9"},
		{"表", "%E8%A1%A8"},
	} {
		got, err := EncodeToken(tc.name)
		if err != nil || got != tc.token {
			t.Errorf("EncodeToken(%q) = %q, %v; want %q", tc.name, got, err, tc.token)
			continue
		}
		back, err := DecodeToken(got)
		if err != nil || back != tc.name {
			t.Errorf("DecodeToken(%q) = %q, %v; want %q", got, back, err, tc.name)
		}
	}
	for _, bad := range []string{"", "\xff", strings.Repeat("a", message.MaxNameBytes+1)} {
		if _, err := EncodeToken(bad); err == nil {
			t.Errorf("EncodeToken(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "a.b", "a b", "%", "%2", "%2e", "%41", "%ZZ", "%FF", "*", ">"} {
		if _, err := DecodeToken(bad); !errors.Is(err, ErrBadToken) {
			t.Errorf("DecodeToken(%q) = %v, want ErrBadToken", bad, err)
		}
	}
}

func TestSubjects(t *testing.T) {
	var s Subjects
	cdc, err := s.ChangeSets("my.events")
	if err != nil || cdc != "mvd.cdc.my%2Eevents" {
		t.Fatalf("ChangeSets = %q, %v", cdc, err)
	}
	ref, err := s.Refreshed("v 1")
	if err != nil || ref != "mvd.view.v%201.refreshed" {
		t.Fatalf("Refreshed = %q, %v", ref, err)
	}
	if v, err := s.ViewOf(ref); err != nil || v != "v 1" {
		t.Fatalf("ViewOf = %q, %v", v, err)
	}
	if src, err := s.SourceOf(cdc); err != nil || src != "my.events" {
		t.Fatalf("SourceOf = %q, %v", src, err)
	}
	for _, bad := range []string{"mvd.view..refreshed", "mvd.view.a.b.refreshed", "other.view.a.refreshed"} {
		if _, err := s.ViewOf(bad); err == nil {
			t.Errorf("ViewOf(%q) accepted", bad)
		}
	}
	if s.ChangeSetStream() != "MVD_CDC" || s.RefreshStream() != "MVD_VIEWS" || s.AllRefreshed() != "mvd.view.*.refreshed" {
		t.Fatal("default stream names changed")
	}
	if err := (Subjects{Prefix: "a.b"}).validate(); err == nil {
		t.Fatal("a dotted prefix was accepted")
	}
	long := strings.Repeat("é", 300)
	name, err := ConsumerName(long)
	if err != nil || len(name) > 200 {
		t.Fatalf("consumer name of a long view: %d bytes, %v", len(name), err)
	}
	if n2, _ := ConsumerName(long + "x"); n2 == name {
		t.Fatal("two long names share a consumer")
	}
}

func FuzzToken(f *testing.F) {
	for _, s := range []string{"events", "my.table", "é", "%41", "a%2Eb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tok, err := EncodeToken(s); err == nil {
			if strings.ContainsAny(tok, " \t\r\n.*>/\\") || tok == "" {
				t.Fatalf("EncodeToken(%q) = %q is not a safe token", s, tok)
			}
			if back, err := DecodeToken(tok); err != nil || back != s {
				t.Fatalf("DecodeToken(EncodeToken(%q)) = %q, %v", s, back, err)
			}
		} else if s != "" && utf8.ValidString(s) && len(s) <= message.MaxNameBytes {
			t.Fatalf("EncodeToken(%q): %v", s, err)
		}
		// Every accepted token is canonical: it encodes back to itself.
		if name, err := DecodeToken(s); err == nil {
			if tok, err := EncodeToken(name); err != nil || tok != s {
				t.Fatalf("EncodeToken(DecodeToken(%q)) = %q, %v", s, tok, err)
			}
		}
	})
}
