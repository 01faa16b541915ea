package message

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrBadToken is returned by DecodeToken for text that EncodeToken cannot
// have produced.
var ErrBadToken = errors.New("stream: not an encoded subject token")

// MaxNameBytes bounds the names EncodeToken accepts, so that a subject
// stays far below the server's control-line limit (4 KiB).
const MaxNameBytes = 1024

// EncodeToken turns a table or view name into one NATS subject token that
// is also a valid JetStream stream and consumer name. Table names may hold
// anything (dots, spaces, '*', '>', '/', unicode), so the encoding keeps
// the bytes A-Z, a-z, 0-9, '_' and '-' as they are and writes every other
// byte of the name's UTF-8 as '%' followed by two upper-case hex digits
// (percent-encoding): "events" stays "events", "my.table" becomes
// "my%2Etable", "é" becomes "%C3%A9". The encoding is a bijection between
// non-empty valid UTF-8 names and the tokens DecodeToken accepts.
func EncodeToken(name string) (string, error) {
	if name == "" {
		return "", errors.New("stream: empty name")
	}
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("stream: name %q is not valid UTF-8", name)
	}
	if len(name) > MaxNameBytes {
		return "", fmt.Errorf("stream: name %.40q… is longer than %d bytes", name, MaxNameBytes)
	}
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		if PlainTokenByte(c) {
			b.WriteByte(c)
			continue
		}
		const hex = "0123456789ABCDEF"
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String(), nil
}

// DecodeToken inverts EncodeToken. It refuses anything EncodeToken does not
// produce (lower-case hex, an escaped plain byte, invalid UTF-8), so every
// name has exactly one token.
func DecodeToken(token string) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%w: empty", ErrBadToken)
	}
	var b []byte
	for i := 0; i < len(token); i++ {
		c := token[i]
		if PlainTokenByte(c) {
			b = append(b, c)
			continue
		}
		if c != '%' || i+2 >= len(token) {
			return "", fmt.Errorf("%w: %q has %q at byte %d", ErrBadToken, token, c, i)
		}
		hi, ok1 := upperHex(token[i+1])
		lo, ok2 := upperHex(token[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("%w: %q has a bad escape at byte %d", ErrBadToken, token, i)
		}
		v := hi<<4 | lo
		if PlainTokenByte(v) {
			return "", fmt.Errorf("%w: %q escapes the plain byte %q", ErrBadToken, token, v)
		}
		b = append(b, v)
		i += 2
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%w: %q does not decode to UTF-8", ErrBadToken, token)
	}
	return string(b), nil
}

// PlainTokenByte reports whether EncodeToken keeps c as it is: the
// letters, digits, '_' and '-'.
func PlainTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

func upperHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
