package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/mvd-project/mvd/matview"
)

// Exit statuses of mvd, as "code" carries them.
const (
	codeFailure  = 1
	codeUsage    = 2
	codeConflict = 3
)

// ErrorBody is the JSON of every failed request.
type ErrorBody struct {
	// Error is the message, one line, as the CLI prints it after "mvd: ".
	Error string `json:"error"`
	// Code is the CLI's exit status for the same failure.
	Code int `json:"code"`
}

// WriteJSON writes v as one JSON line with status, without HTML escaping
// (SQL holds '<' and '>'), as the CLI's --json prints it.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away: nothing to tell it
}

// WriteError answers {"error":err,"code":code} with status.
func WriteError(w http.ResponseWriter, status, code int, err error) {
	WriteJSON(w, status, ErrorBody{Error: OneLine(err.Error()), Code: code})
}

// exitCoder is an error that chooses the CLI's exit status (matview's
// conflict error, the CLI's usage errors).
type exitCoder interface{ ExitCode() int }

// Classify maps err to the HTTP status and the CLI exit code it is
// answered with: a usage mistake 400/2, a lost refresh race 409/3, a
// missing view 404/1, a name taken 409/1, a bad or unsupported request
// 400/1, anything else 500/1.
func Classify(err error) (status, code int) {
	code = codeFailure
	var ec exitCoder
	if errors.As(err, &ec) && ec.ExitCode() > 0 {
		code = ec.ExitCode()
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, codeUsage
	case code == codeUsage:
		return http.StatusBadRequest, code
	case code == codeConflict || errors.Is(err, matview.ErrConflict):
		return http.StatusConflict, codeConflict
	case errors.Is(err, matview.ErrNotFound), errors.Is(err, matview.ErrNotAView):
		return http.StatusNotFound, code
	case errors.Is(err, matview.ErrExists):
		return http.StatusConflict, code
	case errors.Is(err, matview.ErrInvalid), errors.Is(err, matview.ErrUnsupported):
		return http.StatusBadRequest, code
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, code
	}
	return http.StatusInternalServerError, code
}

// Fail answers err as Classify says.
func Fail(w http.ResponseWriter, err error) {
	status, code := Classify(err)
	WriteError(w, status, code, err)
}

// UsageError is a mistake in a request (exit code 2, status 400).
type UsageError struct{ Msg string }

func (e UsageError) Error() string { return e.Msg }

// ExitCode is 2, the CLI's status for a usage mistake.
func (e UsageError) ExitCode() int { return codeUsage }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error { return UsageError{fmt.Sprintf(format, args...)} }

// DecodeBody reads r's JSON body into v, refusing unknown fields and
// trailing data: a mistyped field must not be ignored. A body over the
// server's limit is answered 413 by Classify.
func DecodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fmt.Errorf("request body over %d bytes: %w", tooBig.Limit, err)
		}
		if errors.Is(err, io.EOF) {
			return Usagef("request body: want a JSON object")
		}
		return Usagef("request body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return fmt.Errorf("request body over %d bytes: %w", tooBig.Limit, err)
		}
		return Usagef("request body: one JSON object, nothing after it")
	}
	return nil
}
