package datafile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mvd-project/mvd/lance/internal/format"
)

// ioError marks a failure of the underlying storage (not of the bytes it
// returned), which is neither corrupt nor unsupported.
type ioError struct{ err error }

func (e *ioError) Error() string { return e.err.Error() }
func (e *ioError) Unwrap() error { return e.err }

// storageErr marks err, returned by ReadAt, as a storage failure; a short
// read is not one: the file is shorter than its own metadata says.
func storageErr(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	return &ioError{err: err}
}

// unsupportedErr is fmt.Errorf for a feature this decoder does not read:
// the message is kept and the error wraps format.ErrUnsupported.
func unsupportedErr(f string, args ...any) error {
	return format.Mark(fmt.Errorf(f, args...), format.ErrUnsupported)
}

// decodeErr classifies an error from decoding the file at the reader's
// boundary, so every error it returns is checkable with errors.Is: a
// cancelled context and a storage failure stay what they are; an
// unsupported feature already wraps format.ErrUnsupported; anything else
// means the bytes cannot be decoded and wraps format.ErrCorrupt. The
// message always names the file.
func decodeErr(name string, err error) error {
	if err == nil {
		return nil
	}
	var ioe *ioError
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ioe),
		errors.Is(err, format.ErrUnsupported), errors.Is(err, format.ErrCorrupt):
	default:
		err = format.Mark(err, format.ErrCorrupt)
	}
	if !strings.Contains(err.Error(), name) {
		err = fmt.Errorf("lance file %s: %w", name, err)
	}
	return err
}
