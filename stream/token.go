package stream

import "github.com/mvd-project/mvd/message"

// ErrBadToken is returned by DecodeToken for text that EncodeToken cannot
// have produced.
var ErrBadToken = message.ErrBadToken

// EncodeToken turns a table or view name into one NATS subject token (see
// message.EncodeToken: the names in messages and subjects share one
// encoding).
func EncodeToken(name string) (string, error) { return message.EncodeToken(name) }

// DecodeToken inverts EncodeToken.
func DecodeToken(token string) (string, error) { return message.DecodeToken(token) }

// plainTokenByte reports whether EncodeToken keeps c as it is.
func plainTokenByte(c byte) bool { return message.PlainTokenByte(c) }
