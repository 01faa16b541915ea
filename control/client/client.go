// Package client is the client of mvd's control API (package
// control/httpapi, served by `mvd serve` on its admin listener under
// /v1/): it finds the daemon serving a database through
// DIR/.mvd/serve.json and sends the admin bearer token.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/mvd-project/mvd/serveinfo"
)

// TokenEnv is the environment variable the admin token is read from
// when no token file is given (the daemon reads the same one).
const TokenEnv = "MVD_ADMIN_TOKEN"

// maxResponse caps a response read (a listing of many views, a long
// history); more is an error, not memory.
const maxResponse = 64 << 20

// Client talks to one daemon's control API.
type Client struct {
	base  string // http://HOST:PORT
	token string
	hc    *http.Client
}

// New returns a client of the daemon whose admin server listens on addr
// (HOST:PORT), sending token ("" for none).
func New(addr, token string) *Client {
	return &Client{base: "http://" + addr, token: token, hc: &http.Client{}}
}

// Find returns a client of the daemon serving the database dbDir, found
// through dbDir/.mvd/serve.json; running is false (and the client nil)
// when no daemon serves it.
func Find(dbDir, token string) (c *Client, running bool, err error) {
	return FindIn(filepath.Join(dbDir, ".mvd"), token)
}

// FindIn is Find of the daemon whose state directory is stateDir (its
// serve.json there).
func FindIn(stateDir, token string) (c *Client, running bool, err error) {
	info, running, err := serveinfo.Running(stateDir)
	if err != nil || !running {
		return nil, running, err
	}
	if info.AdminAddr == "" {
		return nil, true, errors.New("the daemon serving this database is starting (no serve.json yet); try again")
	}
	return New(info.AdminAddr, token), true, nil
}

// Token is the admin token: file's content when file is given, else the
// environment variable MVD_ADMIN_TOKEN (getenv reads it; "" for none).
func Token(file string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(TokenEnv)), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("admin token file %s is empty", file)
	}
	return t, nil
}

// Error is a request the daemon refused or failed: its {"error","code"}
// answer and HTTP status.
type Error struct {
	// Status is the HTTP status.
	Status int
	// Msg is the daemon's message.
	Msg string
	// Code is the exit status the CLI gives for the failure.
	Code int
}

func (e *Error) Error() string {
	if e.Status == http.StatusUnauthorized {
		return "the daemon refused the request: " + e.Msg + "; give the CLI the same token with --admin-token-file FILE or " + TokenEnv
	}
	return e.Msg
}

// ExitCode is the CLI's exit status for the failure (1 when the daemon
// named none).
func (e *Error) ExitCode() int {
	if e.Code > 0 {
		return e.Code
	}
	return 1
}

// Do sends method path (e.g. "GET", "/v1/views") with in as its JSON
// body (nil for none) and decodes the answer into out (nil to discard
// it; a *json.RawMessage keeps it as sent). A refusal is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	_, err := c.DoHeader(ctx, method, path, in, out)
	return err
}

// DoHeader is Do that also returns the answer's header (with a refusal
// too: the notes of what ran before it failed), nil when no answer came.
// An out of type *[]byte receives the body as it is (a text answer).
func (c *Client) DoHeader(ctx context.Context, method, path string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask the daemon: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("ask the daemon: %s %s: %w", method, path, err)
	}
	if len(data) > maxResponse {
		return nil, fmt.Errorf("ask the daemon: %s %s: answer over %d bytes", method, path, maxResponse)
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
			Code  int    `json:"code"`
		}
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = fmt.Sprintf("the daemon answered %s: %s", resp.Status, strings.TrimSpace(string(data)))
		}
		return resp.Header, &Error{Status: resp.StatusCode, Msg: e.Error, Code: e.Code}
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return resp.Header, nil
	}
	if out == nil {
		return resp.Header, nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return resp.Header, fmt.Errorf("the daemon's answer to %s %s: %w", method, path, err)
	}
	return resp.Header, nil
}
