package lance

import (
	"encoding/json"
	"testing"
)

// jsonHint is parseHint's meaning, through encoding/json only.
func jsonHint(raw []byte) (uint64, bool) {
	var h struct {
		Version uint64 `json:"version"`
	}
	if json.Unmarshal(raw, &h) != nil || h.Version == 0 {
		return 0, false
	}
	return h.Version, true
}

var hintCases = []string{
	`{"version":1}`, `{"version":42}`, `{"version":18446744073709551615}`,
	`{"version":18446744073709551616}`, `{"version":0}`, `{"version":05}`,
	`{"version":-1}`, `{"version":+1}`, `{"version":1.0}`, `{"version":1e3}`,
	`{"version":1} `, ` {"version":1}`, `{"version": 1}`, `{"version":"1"}`,
	`{"version":}`, `{"version":1`, `{"version":1}}`, `{"Version":3}`,
	`{"version":3,"x":1}`, `{}`, ``, `null`, `{"version":1_000}`,
}

// TestParseHint: the direct reading of {"version":N} agrees with
// encoding/json on the forms Lance writes and on near misses.
func TestParseHint(t *testing.T) {
	for _, c := range hintCases {
		gv, gok := parseHint([]byte(c))
		wv, wok := jsonHint([]byte(c))
		if gv != wv || gok != wok {
			t.Errorf("parseHint(%q) = %d, %v; encoding/json says %d, %v", c, gv, gok, wv, wok)
		}
	}
}

func FuzzParseHint(f *testing.F) {
	for _, c := range hintCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		gv, gok := parseHint(raw)
		wv, wok := jsonHint(raw)
		if gv != wv || gok != wok {
			t.Fatalf("parseHint(%q) = %d, %v; encoding/json says %d, %v", raw, gv, gok, wv, wok)
		}
	})
}
