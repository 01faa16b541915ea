package sqlexpr

import (
	"strings"
	"unicode"
)

// Rust's str::to_uppercase/to_lowercase (behind DataFusion's upper and
// lower) apply Unicode's full case mappings, where one character can
// become several; Go's strings.ToUpper/ToLower apply the simple ones.
// upperSpecial covers the unconditional multi-character uppercase
// mappings of Unicode's SpecialCasing.txt that differ from the simple
// mapping (ligatures, ß, and characters without a precomposed capital).
// upperSpecial returns the full uppercase mapping of r when it is one of
// them.
func upperSpecial(r rune) (string, bool) {
	switch r {
	case 'ß':
		return "SS", true
	case 'ŉ':
		return "ʼN", true
	case 'ǰ':
		return "J̌", true
	case 'ΐ':
		return "Ϊ́", true
	case 'ΰ':
		return "Ϋ́", true
	case 'և':
		return "ԵՒ", true
	case 'ẖ':
		return "H̱", true
	case 'ẗ':
		return "T̈", true
	case 'ẘ':
		return "W̊", true
	case 'ẙ':
		return "Y̊", true
	case 'ẚ':
		return "Aʾ", true
	case 'ﬀ':
		return "FF", true
	case 'ﬁ':
		return "FI", true
	case 'ﬂ':
		return "FL", true
	case 'ﬃ':
		return "FFI", true
	case 'ﬄ':
		return "FFL", true
	case 'ﬅ':
		return "ST", true
	case 'ﬆ':
		return "ST", true
	case 'ﬓ':
		return "ՄՆ", true
	case 'ﬔ':
		return "ՄԵ", true
	case 'ﬕ':
		return "ՄԻ", true
	case 'ﬖ':
		return "ՎՆ", true
	case 'ﬗ':
		return "ՄԽ", true
	case 'ὐ':
		return "Υ̓", true
	case 'ὒ':
		return "Υ̓̀", true
	case 'ὔ':
		return "Υ̓́", true
	case 'ὖ':
		return "Υ̓͂", true
	case 'ᾶ':
		return "Α͂", true
	case 'ῆ':
		return "Η͂", true
	case 'ῒ':
		return "Ϊ̀", true
	case 'ῖ':
		return "Ι͂", true
	case 'ῗ':
		return "Ϊ͂", true
	case 'ῢ':
		return "Ϋ̀", true
	case 'ῤ':
		return "Ρ̓", true
	case 'ῦ':
		return "Υ͂", true
	case 'ῧ':
		return "Ϋ͂", true
	case 'ῶ':
		return "Ω͂", true
	case 'ᾳ':
		return "ΑΙ", true
	case 'ῃ':
		return "ΗΙ", true
	case 'ῳ':
		return "ΩΙ", true
	case 'ᾼ':
		return "ΑΙ", true
	case 'ῌ':
		return "ΗΙ", true
	case 'ῼ':
		return "ΩΙ", true
	case 'ᾲ':
		return "ᾺΙ", true
	case 'ᾴ':
		return "ΆΙ", true
	case 'ῂ':
		return "ῊΙ", true
	case 'ῄ':
		return "ΉΙ", true
	case 'ῲ':
		return "ῺΙ", true
	case 'ῴ':
		return "ΏΙ", true
	case 'ᾷ':
		return "Α͂Ι", true
	case 'ῇ':
		return "Η͂Ι", true
	case 'ῷ':
		return "Ω͂Ι", true
	}
	return "", false
}

// sqlUpper upper-cases s with full case mapping.
func sqlUpper(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if m, ok := upperSpecial(r); ok {
			b.WriteString(m)
			continue
		}
		if r >= 0x1F80 && r <= 0x1FAF {
			// Greek with ypogegrammeni: capital base letter plus IOTA.
			b.WriteRune(unicode.ToUpper(greekBase(r)))
			b.WriteRune('Ι')
			continue
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// greekBase maps U+1F80..U+1FAF to the letter without ypogegrammeni.
func greekBase(r rune) rune {
	off := (r - 0x1F80) % 8
	switch {
	case r < 0x1F90:
		return 0x1F00 + off
	case r < 0x1FA0:
		return 0x1F20 + off
	}
	return 0x1F60 + off
}

// sqlLower lower-cases s with full case mapping: İ becomes i + U+0307 and
// Σ at the end of a word becomes ς, as Rust does.
func sqlLower(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i, r := range rs {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(rs, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma applies Unicode's Final_Sigma condition, simplified to
// letters: a cased letter before, none after.
func finalSigma(rs []rune, i int) bool {
	before := false
	for j := i - 1; j >= 0; j-- {
		if unicode.IsLetter(rs[j]) {
			before = true
			break
		}
		if !unicode.Is(unicode.Mn, rs[j]) {
			break
		}
	}
	if !before {
		return false
	}
	for j := i + 1; j < len(rs); j++ {
		if unicode.IsLetter(rs[j]) {
			return false
		}
		if !unicode.Is(unicode.Mn, rs[j]) {
			break
		}
	}
	return true
}
