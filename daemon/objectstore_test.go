package daemon

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mvd-project/mvd/cdc"
)

// TestObjectStoreConfig: --db s3://… is served with polling (25ms by
// default), a local state directory derived from the URI unless given,
// and --storage-option from flags, the file and the environment.
func TestObjectStoreConfig(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	yaml := filepath.Join(t.TempDir(), "mvd.yaml")
	if err := os.WriteFile(yaml, []byte("db: s3://bkt/pre\nstorage-option:\n  - aws_region=eu-west-1\n  - allow_http=true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(parseFlags(t, "--db", "s3://bkt/pre/db", "--storage-option", "aws_endpoint=http://127.0.0.1:9", "--storage-option", "allow_http=true"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Remote() || c.WatchMode() != cdc.ModePoll || c.PollInterval != defaultObjectStorePoll {
		t.Errorf("s3 db: remote %v, watch %v, poll %v; want polling every %v", c.Remote(), c.WatchMode(), c.PollInterval, defaultObjectStorePoll)
	}
	if dir := filepath.Dir(c.StateDir); dir != filepath.Join(cache, "mvd") {
		t.Errorf("state dir %s: want one under %s/mvd", c.StateDir, cache)
	}
	if m := c.StorageOptions.Map(); m["aws_endpoint"] != "http://127.0.0.1:9" || m["allow_http"] != "true" || len(m) != 2 {
		t.Errorf("storage options %v", m)
	}
	other, err := LoadConfig(parseFlags(t, "--db", "s3://bkt/pre/other"), nil)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := LoadConfig(parseFlags(t, "--db", "s3://bkt/pre/db/"), nil)
	if other.StateDir == c.StateDir || again.StateDir != c.StateDir {
		t.Errorf("state dirs %s, %s (another db), %s (same db): want one per database", c.StateDir, other.StateDir, again.StateDir)
	}
	given := t.TempDir()
	f, err := LoadConfig(parseFlags(t, "--config", yaml, "--state-dir", given, "--poll-interval", "200ms"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.DB != "s3://bkt/pre" || f.StateDir != given || f.PollInterval != 200*time.Millisecond || f.StorageOptions.Map()["aws_region"] != "eu-west-1" {
		t.Errorf("from the file: %+v", f)
	}
	e, err := LoadConfig(parseFlags(t, "--db", "s3://bkt/pre"), []string{"MVD_STORAGE_OPTION=aws_region=ap-south-1"})
	if err != nil || e.StorageOptions.Map()["aws_region"] != "ap-south-1" {
		t.Errorf("from the environment: %v, %v", e.StorageOptions, err)
	}
}

// TestObjectStoreConfigErrors: fsnotify on an object store, other
// schemes, unknown or malformed storage options and storage options on a
// local database are refused; the first and the last two as usage errors.
func TestObjectStoreConfigErrors(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	db := t.TempDir()
	for _, tc := range []struct {
		args  []string
		env   []string
		want  string
		usage bool
	}{
		{[]string{"--db", "s3://bkt/p", "--watch", "fsnotify"}, nil, "watch fsnotify: db s3://bkt/p is on an object store", true},
		{[]string{"--db", "gs://bkt/p"}, nil, "local directories and s3://BUCKET/PREFIX only", false},
		{[]string{"--db", "s3:///p"}, nil, "names no bucket", false},
		{[]string{"--db", "s3://bkt/p", "--storage-option", "aws_colour=blue"}, nil, `unknown storage option "aws_colour"`, false},
		{[]string{"--db", "s3://bkt/p"}, []string{"AWS_ALLOW_HTTP=maybe"}, `AWS_ALLOW_HTTP`, false},
		{[]string{"--db", "s3://bkt/p", "--storage-option", "novalue"}, nil, `storage-option "novalue": want KEY=VALUE`, true},
		{[]string{"--db", db, "--storage-option", "allow_http=true"}, nil, "storage-option is for s3:// databases", true},
	} {
		_, err := LoadConfig(parseFlags(t, tc.args...), tc.env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v; want %q", tc.args, tc.env, err, tc.want)
			continue
		}
		var ec interface{ ExitCode() int }
		if got := errors.As(err, &ec); got != tc.usage {
			t.Errorf("%v: usage error %v, want %v (%v)", tc.args, got, tc.usage, err)
		}
	}
}

// TestObjectStoreCheckConfig: --check-config prints the storage options
// without the values of secrets.
func TestObjectStoreCheckConfig(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	var out bytes.Buffer
	err := Command(parseFlags(t, "--db", "s3://bkt/p", "--check-config", "--storage-option", "aws_secret_access_key=hunter2",
		"--storage-option", "aws_session_token=tok", "--storage-option", "aws_region=eu-west-1"), nil, &out, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, "hunter2") || strings.Contains(s, "=tok") || !strings.Contains(s, "aws_secret_access_key=REDACTED") ||
		!strings.Contains(s, "aws_region=eu-west-1") {
		t.Errorf("--check-config printed:\n%s", s)
	}
}
