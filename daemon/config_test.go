package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/stream"
)

func parseFlags(t *testing.T, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	BindCommandFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestConfigPrecedence(t *testing.T) {
	db := t.TempDir()
	other := t.TempDir()
	yaml := filepath.Join(t.TempDir(), "mvd.yaml")
	if err := os.WriteFile(yaml, []byte("db: "+other+"\nadmin-addr: 127.0.0.1:9001\nlog-format: json\nwatch: poll\npoll-interval: 250ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		env   []string
		check func(t *testing.T, c Config)
	}{
		{"defaults", []string{"--db", db}, nil, func(t *testing.T, c Config) {
			if c.DB != db || c.StateDir != filepath.Join(db, ".mvd") || c.AdminAddr != defaultAdminAddr || c.LogFormat != "text" || c.Watch != "auto" || c.PollInterval != time.Second {
				t.Errorf("%+v", c)
			}
		}},
		{"file", []string{"--config", yaml}, nil, func(t *testing.T, c Config) {
			if c.DB != other || c.AdminAddr != "127.0.0.1:9001" || c.LogFormat != "json" || c.Watch != "poll" || c.PollInterval != 250*time.Millisecond || c.ConfigFile != yaml {
				t.Errorf("%+v", c)
			}
		}},
		{"env over file", []string{"--config", yaml}, []string{"MVD_ADMIN_ADDR=127.0.0.1:9002", "MVD_DB=" + db, "MVD_UNRELATED=x", "PATH=/bin"}, func(t *testing.T, c Config) {
			if c.DB != db || c.AdminAddr != "127.0.0.1:9002" || c.LogFormat != "json" {
				t.Errorf("%+v", c)
			}
		}},
		{"config file from env", nil, []string{"MVD_CONFIG=" + yaml}, func(t *testing.T, c Config) {
			if c.DB != other || c.ConfigFile != yaml {
				t.Errorf("%+v", c)
			}
		}},
		{"flags over env and file", []string{"--config", yaml, "--admin-addr", "127.0.0.1:9003", "--log-format", "text", "--watch", "fsnotify"},
			[]string{"MVD_ADMIN_ADDR=127.0.0.1:9002", "MVD_LOG_FORMAT=json"}, func(t *testing.T, c Config) {
				if c.AdminAddr != "127.0.0.1:9003" || c.LogFormat != "text" || c.Watch != "fsnotify" || c.DB != other {
					t.Errorf("%+v", c)
				}
			}},
		{"flag default does not beat env", []string{"--db", db}, []string{"MVD_ADMIN_ADDR=127.0.0.1:9004", "MVD_STATE_DIR=" + other}, func(t *testing.T, c Config) {
			if c.AdminAddr != "127.0.0.1:9004" || c.StateDir != other {
				t.Errorf("%+v", c)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(parseFlags(t, tc.args...), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestConfigErrors(t *testing.T) {
	db := t.TempDir()
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("db: "+db+"\nnats_url: nats://x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "db-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	notYAML := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(notYAML, []byte("db: [unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		env  []string
		want []string
	}{
		{nil, nil, []string{"no database directory"}},
		{[]string{"--db", filepath.Join(db, "missing")}, nil, []string{"no such file"}},
		{[]string{"--db", db, "--log-format", "xml", "--watch", "inotify", "--admin-addr", "7480"}, nil, []string{"log-format \"xml\"", "unknown watch mode", "admin-addr \"7480\""}},
		{[]string{"--db", db, "--nats-creds", "/x.creds"}, nil, []string{"nats-creds is given without nats-url"}},
		{[]string{"--db", db, "--nats-url", "nats://h:4222", "--nats-tls-cert", "/c.pem"}, nil, []string{"go together", "nats-tls-cert: stat /c.pem"}},
		{[]string{"--config", bad}, nil, []string{`unknown key "nats_url"`}},
		{[]string{"--config", notYAML}, nil, []string{"read config file"}},
		{[]string{"--db", db}, []string{"MVD_POLL_INTERVAL=soon"}, []string{"poll-interval"}},
		{[]string{"--db", db, "--durability", "fdatasync"}, nil, []string{`durability "fdatasync"`}},
		{[]string{"--db", file}, nil, []string{"is not a directory"}},
		{[]string{"--db", db, "--log-level", "loud"}, nil, []string{`log-level "loud"`}},
		{[]string{"--db", db, "--poll-interval", "-1s"}, nil, []string{"poll-interval -1s: must be at least 10ms"}},
		{[]string{"--db", db, "--poll-interval", "1ns"}, nil, []string{"poll-interval 1ns: must be at least 10ms"}},
		{[]string{"--db", db}, []string{"MVD_POLL_INTERVAL=9ms"}, []string{"poll-interval 9ms"}},
		{[]string{"--db", db, "--nats-max-store", "lots"}, nil, []string{`nats-max-store "lots"`}},
		{[]string{"--db", db, "--nats-max-store", "100MiB"}, nil, []string{"do not fit in nats-max-store 100MiB"}},
		{[]string{"--db", db, "--memory-limit", "0"}, nil, []string{`memory-limit "0"`}},
		{[]string{"--db", db, "--subject-prefix", "a.b"}, nil, []string{`subject-prefix: stream: subject prefix "a.b" must be one subject token`}},
		{[]string{"--db", db}, []string{"MVD_SUBJECT_PREFIX=MVD"}, []string{`subject prefix "MVD"`}},
		{[]string{"--db", db, "--instance-id", "a b"}, nil, []string{`instance-id "a b"`}},
	}
	for _, tc := range tests {
		_, err := LoadConfig(parseFlags(t, tc.args...), tc.env)
		if err == nil {
			t.Errorf("%v %v: no error", tc.args, tc.env)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: error %q does not say %q", tc.args, tc.env, err, w)
			}
		}
	}
}

// TestSubjectPrefixDefault: "mvd" with the embedded server, a prefix
// derived from the database with nats-url, the setting where given.
func TestSubjectPrefixDefault(t *testing.T) {
	db := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", db}, "mvd"},
		{[]string{"--db", db, "--nats-url", "nats://h:4222"}, stream.PrefixFor(db)},
		{[]string{"--db", db, "--nats-url", "nats://h:4222", "--subject-prefix", "shop-1"}, "shop-1"},
	} {
		c, err := LoadConfig(parseFlags(t, tc.args...), nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.SubjectPrefix != tc.want {
			t.Errorf("%v: subject prefix %q, want %q", tc.args, c.SubjectPrefix, tc.want)
		}
	}
	one, _ := LoadConfig(parseFlags(t, "--db", db), nil)
	again, _ := LoadConfig(parseFlags(t, "--db", db), nil)
	other, _ := LoadConfig(parseFlags(t, "--db", db, "--state-dir", t.TempDir()), nil)
	if one.InstanceID == "" || one.InstanceID != again.InstanceID || one.InstanceID == other.InstanceID {
		t.Errorf("default instance ids %q, %q (same state dir), %q (another): want stable per state dir, distinct across", one.InstanceID, again.InstanceID, other.InstanceID)
	}
	if a, b := stream.PrefixFor("/data/a"), stream.PrefixFor("/data/b"); a == b || stream.CheckPrefix(a) != nil {
		t.Errorf("derived prefixes %q, %q: want distinct valid tokens", a, b)
	}
}

// TestPollIntervalUsage: an interval under 10ms is a usage error (the
// CLI exits 2: errors.As finds ExitCode through Command's wrapping), and
// 10ms itself is accepted.
func TestPollIntervalUsage(t *testing.T) {
	db := t.TempDir()
	var out bytes.Buffer
	err := Command(parseFlags(t, "--db", db, "--poll-interval", "1ns", "--check-config"), nil, &out, &out, nil)
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != 2 {
		t.Errorf("--poll-interval 1ns: %v; want a usage error (exit 2)", err)
	}
	if _, err := LoadConfig(parseFlags(t, "--db", db, "--poll-interval", "10ms"), nil); err != nil {
		t.Errorf("--poll-interval 10ms: %v", err)
	}
	if _, err := LoadConfig(parseFlags(t, "--db", db, "--log-format", "xml"), nil); errors.As(err, &ec) {
		t.Errorf("log-format xml: %v is a usage error; want a failure (exit 1) as before", err)
	}
}

// TestStreamSizes: the stream sizes default to what fits a small disk
// and are read with units.
func TestStreamSizes(t *testing.T) {
	db := t.TempDir()
	c, err := LoadConfig(parseFlags(t, "--db", db), nil)
	if err != nil {
		t.Fatal(err)
	}
	if store, changes, refresh := c.NATSLimits(); store != 256<<20 || changes != 128<<20 || refresh != 64<<20 {
		t.Errorf("defaults: store %d, changes %d, refresh %d", store, changes, refresh)
	}
	c, err = LoadConfig(parseFlags(t, "--db", db, "--nats-changes-max-bytes", "1GiB", "--nats-url", "nats://h:4222"), []string{"MVD_MEMORY_LIMIT=2GB"})
	if err != nil {
		t.Fatal(err)
	}
	if _, changes, _ := c.NATSLimits(); changes != 1<<30 || c.MemoryLimit != "2GB" {
		t.Errorf("an external server's streams are not capped by the embedded store: %d, %+v", changes, c)
	}
}

// TestDurabilityConfig: durability defaults to fsync and takes none from
// a flag or the environment.
func TestDurabilityConfig(t *testing.T) {
	db := t.TempDir()
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--db", db}, nil, "fsync"},
		{[]string{"--db", db, "--durability", "none"}, nil, "none"},
		{[]string{"--db", db}, []string{"MVD_DURABILITY=none"}, "none"},
	} {
		c, err := LoadConfig(parseFlags(t, tc.args...), tc.env)
		if err != nil || c.Durability != tc.want {
			t.Errorf("%v %v: durability %q, %v; want %q", tc.args, tc.env, c.Durability, err, tc.want)
		}
	}
}

// TestSourceWritebackConfig: the source writeback is on by default and
// turned off by a flag, the environment or the file.
func TestSourceWritebackConfig(t *testing.T) {
	db := t.TempDir()
	yaml := filepath.Join(t.TempDir(), "mvd.yaml")
	if err := os.WriteFile(yaml, []byte("db: "+db+"\nsource-writeback: false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  []string
		want bool
	}{
		{[]string{"--db", db}, nil, true},
		{[]string{"--db", db, "--source-writeback=false"}, nil, false},
		{[]string{"--db", db}, []string{"MVD_SOURCE_WRITEBACK=false"}, false},
		{[]string{"--config", yaml}, nil, false},
		{[]string{"--config", yaml, "--source-writeback"}, nil, true},
	} {
		c, err := LoadConfig(parseFlags(t, tc.args...), tc.env)
		if err != nil || c.SourceWriteback != tc.want {
			t.Errorf("%v %v: source writeback %v, %v; want %v", tc.args, tc.env, c.SourceWriteback, err, tc.want)
		}
	}
}

// TestCheckConfig: --check-config prints the effective configuration
// and returns without serving (no lock, no serve.json).
func TestCheckConfig(t *testing.T) {
	db := t.TempDir()
	var out bytes.Buffer
	err := Command(parseFlags(t, "--db", db, "--check-config", "--admin-addr", "127.0.0.1:0"), nil, &out, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := json.Unmarshal(out.Bytes(), &c); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if c.DB != db || c.AdminAddr != "127.0.0.1:0" {
		t.Errorf("printed %+v", c)
	}
	// The effective poll interval, not the "0: default" placeholder.
	if c.PollInterval != time.Second {
		t.Errorf("poll-interval printed as %v, want the effective 1s", c.PollInterval)
	}
	out.Reset()
	if err := Command(parseFlags(t, "--db", db, "--check-config", "--watch", "poll"), nil, &out, &out, nil); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out.Bytes(), &c); err != nil || c.PollInterval != 100*time.Millisecond {
		t.Errorf("--watch poll: poll-interval %v (%v), want 100ms", c.PollInterval, err)
	}
	if _, err := os.Stat(filepath.Join(db, ".mvd")); !os.IsNotExist(err) {
		t.Errorf("--check-config created the state directory (%v)", err)
	}
	err = Command(parseFlags(t, "--check-config"), nil, &out, &out, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid configuration") {
		t.Errorf("invalid configuration: %v", err)
	}
}
