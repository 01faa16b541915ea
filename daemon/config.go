package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"

	"github.com/mvd-project/mvd/cdc"
	"github.com/mvd-project/mvd/cluster"
	"github.com/mvd-project/mvd/matview"
	"github.com/mvd-project/mvd/stream"
	"github.com/mvd-project/mvd/vfs"
)

// Config is everything `mvd serve` is configured with. Each field has
// one key, spelled the same as a flag (--nats-url), an environment
// variable (MVD_NATS_URL) and a YAML key (nats-url:); flags win over the
// environment, which wins over the file.
type Config struct {
	// DB is the database directory (tables at DB/NAME.lance), or
	// s3://BUCKET/PREFIX (tables at s3://BUCKET/PREFIX/NAME.lance).
	DB string `koanf:"db" json:"db"`
	// StorageOptions are an s3:// database's object-store settings,
	// KEY=VALUE with LanceDB's keys (aws_endpoint, allow_http, …), over
	// the AWS_* environment.
	StorageOptions StorageOptionList `koanf:"storage-option" json:"storage-option,omitempty"`
	// ConfigFile is the YAML file the rest was read from, if any.
	ConfigFile string `koanf:"config" json:"config"`
	// StateDir holds the lock, serve.json, Badger and the embedded
	// JetStream store: a local directory (default DB/.mvd, or for an
	// s3:// database the user's cache directory/mvd/<hash of DB>).
	StateDir string `koanf:"state-dir" json:"state-dir"`
	// NATSURL selects an external NATS server or cluster; empty means an
	// embedded server in-process, on loopback, with a generated token.
	NATSURL string `koanf:"nats-url" json:"nats-url"`
	// NATSCreds is a NATS credentials file for NATSURL.
	NATSCreds string `koanf:"nats-creds" json:"nats-creds"`
	// NATSTLSCert, NATSTLSKey and NATSTLSCA are TLS files for NATSURL.
	NATSTLSCert string `koanf:"nats-tls-cert" json:"nats-tls-cert"`
	NATSTLSKey  string `koanf:"nats-tls-key" json:"nats-tls-key"`
	NATSTLSCA   string `koanf:"nats-tls-ca" json:"nats-tls-ca"`
	// SubjectPrefix is the first token of every subject and stream of
	// this database (docs/messages.md): "mvd" with the embedded server,
	// stream.PrefixFor(DB) with nats-url, so that two databases sharing
	// one server never mix.
	SubjectPrefix string `koanf:"subject-prefix" json:"subject-prefix"`
	// InstanceID names this mvd serve in its notifications ("instance")
	// and serve.json: by default the host name and 4 bytes of hex of the
	// SHA-256 of the state directory, stable across restarts and distinct
	// for two daemons on one host (they need distinct state directories).
	InstanceID string `koanf:"instance-id" json:"instance-id"`
	// AdminAddr is the admin HTTP address (/healthz, /readyz, /metrics
	// and the control API under /v1/).
	AdminAddr string `koanf:"admin-addr" json:"admin-addr"`
	// AdminTokenFile holds the bearer token every admin request must
	// carry; AdminToken is its content, or MVD_ADMIN_TOKEN's (never
	// printed). A non-loopback AdminAddr requires one.
	AdminTokenFile string `koanf:"admin-token-file" json:"admin-token-file"`
	AdminToken     string `koanf:"-" json:"-"`
	// LogFormat is "text" or "json"; LogLevel "debug", "info", "warn" or
	// "error".
	LogFormat string `koanf:"log-format" json:"log-format"`
	LogLevel  string `koanf:"log-level" json:"log-level"`
	// Watch is the change detection mode: "auto", "fsnotify" or "poll".
	Watch string `koanf:"watch" json:"watch"`
	// PollInterval is how often tables are looked at without an event
	// (0: the watcher's default for the mode).
	PollInterval time.Duration `koanf:"poll-interval" json:"poll-interval"`
	// Durability is "fsync" (every view commit synced: the default; a
	// refresh that moves only the watermark has its version's name synced
	// just after it returns), "strict" (every commit durable before its
	// refresh returns) or "none" (no fsync, as LanceDB's local store:
	// safe if the process is killed, NOT against power loss or a kernel
	// crash). See matview.Options.Durability.
	Durability string `koanf:"durability" json:"durability"`
	// CreateGrace is how long a view another writer created, and has not
	// refreshed yet, is left to its creator's first refresh before the
	// daemon refreshes it (0: at once).
	CreateGrace time.Duration `koanf:"create-grace" json:"create-grace"`
	// NATSMaxStore caps the embedded NATS server's JetStream store;
	// NATSChangesMaxBytes and NATSRefreshMaxBytes cap the change-set and
	// refresh streams, which JetStream reserves in the store up front (a
	// size with a unit: "256MiB"). The defaults fit a disk with 300 MB
	// free.
	NATSMaxStore        string `koanf:"nats-max-store" json:"nats-max-store"`
	NATSChangesMaxBytes string `koanf:"nats-changes-max-bytes" json:"nats-changes-max-bytes"`
	NATSRefreshMaxBytes string `koanf:"nats-refresh-max-bytes" json:"nats-refresh-max-bytes"`
	// MemoryLimit is a soft limit on the daemon's memory (Go's
	// debug.SetMemoryLimit: the collector works harder near it); empty for
	// none.
	MemoryLimit string `koanf:"memory-limit" json:"memory-limit"`
	// CompactSmallFragments and CompactDeletedPercent are the compaction
	// policy of views that set none in their metadata (mvd view create
	// --compact-small-fragments, --compact-deleted-percent): a view with
	// more small fragments, or more percent of its rows deleted, is
	// compacted by its owner between refreshes (negative: never).
	CompactSmallFragments int     `koanf:"compact-small-fragments" json:"compact-small-fragments"`
	CompactDeletedPercent float64 `koanf:"compact-deleted-percent" json:"compact-deleted-percent"`
	// LeaseTTL is how long the view and source leases of an instance on
	// an external NATS outlive its last renewal (it renews every third of
	// it): the others take the views of an instance killed within about
	// that long (package cluster).
	LeaseTTL time.Duration `koanf:"lease-ttl" json:"lease-ttl"`
	// SourceWriteback has the watcher start writing each new version of a
	// local source to the disk shortly after reading it (serve's default),
	// instead of leaving the writer's unsynced files to the kernel's
	// writeback, which comes in bursts that stall the view commits' syncs
	// on the same disk (cdc.Options.WritebackAfter). It makes nothing
	// durable and changes no file.
	SourceWriteback bool `koanf:"source-writeback" json:"source-writeback"`
}

// defaultAdminAddr is where the admin HTTP server listens by default:
// loopback only.
const defaultAdminAddr = "127.0.0.1:7480"

// minLeaseTTL is the shortest lease TTL serve accepts: renewals (every
// third of it) must fit in it with room for a slow NATS round trip.
const minLeaseTTL = 300 * time.Millisecond

// minPollInterval is the shortest poll interval serve accepts.
const minPollInterval = 10 * time.Millisecond

// usageError marks a configuration mistake the CLI reports as a usage
// error (exit status 2, through its ExitCode method).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// ExitCode is 2, mvd's status for a usage mistake.
func (e usageError) ExitCode() int { return 2 }

// envPrefix starts every environment variable mvd serve reads.
const envPrefix = "MVD_"

// bindFlags defines the serve flags on fs, with their defaults and help.
func bindFlags(fs *pflag.FlagSet) {
	fs.String("db", "", "`DIR` of the database: tables at DIR/NAME.lance, or s3://BUCKET/PREFIX (required)")
	fs.StringArray("storage-option", nil, "object-store setting `KEY=VALUE` of an s3:// --db, with LanceDB's keys (aws_endpoint, aws_region, aws_access_key_id, aws_secret_access_key, aws_session_token, allow_http); repeatable, over the AWS_* environment")
	fs.String("config", "", "YAML configuration `FILE`; its keys are these flags' names (db, nats-url, admin-addr, …)")
	fs.String("state-dir", "", "local state `DIR`: lock, serve.json, Badger, embedded JetStream (default DIR/.mvd; for s3:// the user cache directory's mvd/<16 hex of the database URI's SHA-256>)")
	fs.String("nats-url", "", "external NATS server or cluster `URL`s, comma-separated (default: an embedded nats-server on loopback)")
	fs.String("nats-creds", "", "NATS credentials `FILE` for --nats-url")
	fs.String("nats-tls-cert", "", "TLS client certificate `FILE` for --nats-url")
	fs.String("nats-tls-key", "", "TLS client key `FILE` for --nats-url")
	fs.String("nats-tls-ca", "", "TLS CA certificate `FILE` for --nats-url")
	fs.String("subject-prefix", "", "`TOKEN` starting every NATS subject, stream and consumer of this database (default mvd with the embedded server, mvd_<8 hex of the database path> with --nats-url)")
	fs.String("instance-id", "", "`ID` of this daemon in its notifications: letters, digits, '.', '_' and '-' (default: the host name and a hash of the state directory)")
	fs.String("admin-addr", defaultAdminAddr, "`HOST:PORT` of the admin HTTP server: /healthz, /readyz, /metrics and the control API /v1/ (any non-loopback address needs a token)")
	fs.String("admin-token-file", "", "`FILE` holding the bearer token every admin request must carry (or MVD_ADMIN_TOKEN; required when --admin-addr is not loopback)")
	fs.String("log-format", "text", "log `FORMAT`: text or json")
	fs.String("log-level", "info", "log `LEVEL`: debug, info, warn or error")
	fs.String("watch", "auto", "change detection `MODE`: auto (fsnotify, polling if unavailable; always polling on s3://), fsnotify or poll")
	fs.Duration("poll-interval", 0, "how often tables are looked at without an event, as a `DURATION` (default 1s with fsnotify, 100ms polling, 25ms on s3://: one HEAD per watched table and one listing per interval)")
	fs.Duration("create-grace", 2*time.Second, "how long a view created by another writer (LanceDB) and not refreshed yet is left to its creator's first refresh, as a `DURATION` (0: refresh at once)")
	fs.String("nats-max-store", "256MiB", "`SIZE` cap of the embedded NATS server's JetStream store")
	fs.String("nats-changes-max-bytes", "128MiB", "`SIZE` cap of the change-set stream (oldest change sets go first)")
	fs.String("nats-refresh-max-bytes", "64MiB", "`SIZE` cap of the refresh-notification stream")
	fs.String("memory-limit", "", "soft memory limit as a `SIZE` (e.g. 2GiB): the garbage collector works harder near it (default none)")
	fs.Int("compact-small-fragments", matview.DefaultCompactSmallFragments, "compact a view once it has more than `N` small fragments, unless its own metadata says otherwise (negative: never)")
	fs.Float64("compact-deleted-percent", matview.DefaultCompactDeletedPercent, "compact a view's fragments once more than `PERCENT` of its rows are deleted, unless its own metadata says otherwise (negative: never)")
	fs.Duration("lease-ttl", cluster.DefaultTTL, "with --nats-url: how long an instance's view and source leases outlive its last renewal, as a `DURATION` (renewed every third of it; the others take a killed instance's views after about that long)")
	fs.Bool("source-writeback", true, "start writing each new version of a local source table to the disk just after reading it, rather than leaving it to the kernel, whose writeback every few seconds stalls the view commits' syncs on the same disk (it makes nothing durable and changes no file; false: leave it to the kernel)")
	fs.String("durability", vfs.DurabilityFsync, "`MODE` of view commits: fsync (durable; a refresh that moves only the watermark syncs its version's name just after it returns), strict (every commit durable before it returns), or none (no fsync, as LanceDB: survives a killed process, not a power loss)")
}

// knownKeys are the configuration keys; anything else in a YAML file is
// a mistake worth stopping for.
var knownKeys = []string{"db", "storage-option", "config", "state-dir", "nats-url", "nats-creds", "nats-tls-cert", "nats-tls-key", "nats-tls-ca", "subject-prefix", "instance-id", "admin-addr", "admin-token-file", "log-format", "log-level", "watch", "poll-interval", "durability", "nats-max-store", "nats-changes-max-bytes", "nats-refresh-max-bytes", "memory-limit", "create-grace", "compact-small-fragments", "compact-deleted-percent", "lease-ttl", "source-writeback"}

// LoadConfig builds the configuration from the flags in fs (defined by
// bindFlags and parsed), the environment environ (os.Environ() form) and
// the YAML file named by --config or MVD_CONFIG. It validates the result.
func LoadConfig(fs *pflag.FlagSet, environ []string) (Config, error) {
	k := koanf.New(".")
	envProvider := env.Provider(".", env.Opt{
		Prefix:        envPrefix,
		EnvironFunc:   func() []string { return environ },
		TransformFunc: envKey,
	})
	// The file is named by a flag or the environment, so read those first.
	pre := koanf.New(".")
	if err := pre.Load(envProvider, nil); err != nil {
		return Config{}, fmt.Errorf("read environment: %w", err)
	}
	path := pre.String("config")
	if f := fs.Lookup("config"); f != nil && f.Changed {
		path = f.Value.String()
	}
	if path != "" {
		fk := koanf.New(".")
		if err := fk.Load(file.Provider(path), yaml.Parser()); err != nil {
			return Config{}, fmt.Errorf("read config file %s: %w", path, err)
		}
		for _, key := range fk.Keys() {
			if !slices.Contains(knownKeys, key) {
				return Config{}, fmt.Errorf("config file %s: unknown key %q (known: %s)", path, key, strings.Join(knownKeys, ", "))
			}
		}
		if err := k.Merge(fk); err != nil {
			return Config{}, err
		}
	}
	if err := k.Load(envProvider, nil); err != nil {
		return Config{}, fmt.Errorf("read environment: %w", err)
	}
	// Flags: those set on the command line always win; a flag's default
	// applies only where neither the environment nor the file set it.
	if err := k.Load(posflag.Provider(fs, ".", k), nil); err != nil {
		return Config{}, fmt.Errorf("read flags: %w", err)
	}
	var c Config
	if err := k.UnmarshalWithConf("", &c, koanf.UnmarshalConf{Tag: "koanf"}); err != nil {
		return Config{}, fmt.Errorf("configuration: %w", err)
	}
	c.ConfigFile = path
	c.AdminToken = envValue(environ, adminTokenEnv)
	if err := c.finish(environGetenv(environ)); err != nil {
		return Config{}, err
	}
	return c, nil
}

// envKey maps MVD_NATS_URL to nats-url; variables that are not
// configuration keys are ignored (other mvd commands read MVD_* too).
func envKey(k, v string) (string, any) {
	key := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(k, envPrefix)), "_", "-")
	if !slices.Contains(knownKeys, key) {
		return "", nil
	}
	return key, v
}

// finish fills derived defaults and validates; getenv reads the
// environment (the AWS_* settings of an s3:// database).
func (c *Config) finish(getenv func(string) string) error {
	var errs []error
	switch {
	case c.DB == "":
		errs = append(errs, errNoDB)
	case strings.Contains(c.DB, "://") || len(c.StorageOptions) > 0:
		errs = append(errs, c.finishRemoteDB(getenv)...)
	default:
		errs = append(errs, c.finishLocalDB()...)
	}
	if c.StateDir == "" && c.DB != "" {
		c.StateDir = filepath.Join(c.DB, ".mvd")
	} else if c.StateDir != "" {
		if abs, err := filepath.Abs(c.StateDir); err == nil {
			c.StateDir = abs
		}
	}
	if c.AdminAddr == "" {
		c.AdminAddr = defaultAdminAddr
	}
	if c.Durability == "" {
		c.Durability = vfs.DurabilityFsync
	}
	if err := vfs.CheckDurability(c.Durability); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := net.SplitHostPort(c.AdminAddr); err != nil {
		errs = append(errs, fmt.Errorf("admin-addr %q: want HOST:PORT: %w", c.AdminAddr, err))
	} else {
		errs = append(errs, c.checkAdminToken()...)
	}
	switch c.LogFormat {
	case "":
		c.LogFormat = "text"
	case "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log-format %q: want text or json", c.LogFormat))
	}
	switch c.LogLevel {
	case "":
		c.LogLevel = "info"
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log-level %q: want debug, info, warn or error", c.LogLevel))
	}
	if _, err := cdc.ParseMode(c.Watch); err != nil {
		errs = append(errs, fmt.Errorf("watch: %w", err))
	}
	errs = append(errs, nonNegative("create-grace", c.CreateGrace)...)
	errs = append(errs, c.finishLeaseTTL()...)
	if c.PollInterval == 0 {
		c.PollInterval = c.defaultPollInterval()
	} else if c.PollInterval < minPollInterval {
		// A nanosecond interval would have an idle daemon spin a core.
		errs = append(errs, usageError{fmt.Errorf("poll-interval %v: must be at least %v (or 0 for the default)", c.PollInterval, minPollInterval)})
	}
	if err := c.CompactPolicy().Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.checkNATS()...)
	if err := c.finishSubjectPrefix(); err != nil {
		errs = append(errs, usageError{err})
	}
	if err := c.finishInstanceID(); err != nil {
		errs = append(errs, usageError{err})
	}
	errs = append(errs, c.checkSizes()...)
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// finishLeaseTTL fills the default lease TTL and validates it.
func (c *Config) finishLeaseTTL() []error {
	if c.LeaseTTL == 0 {
		c.LeaseTTL = cluster.DefaultTTL
	} else if c.LeaseTTL < minLeaseTTL {
		return []error{usageError{fmt.Errorf("lease-ttl %v: must be at least %v", c.LeaseTTL, minLeaseTTL)}}
	}
	return nil
}

// nonNegative refuses a negative duration setting.
func nonNegative(name string, d time.Duration) []error {
	if d < 0 {
		return []error{fmt.Errorf("%s %v: must not be negative", name, d)}
	}
	return nil
}

// defaultPollInterval is the watcher's default for the mode, filled in
// so that --check-config prints the value that runs.
func (c *Config) defaultPollInterval() time.Duration {
	if c.Remote() {
		return defaultObjectStorePoll
	}
	if c.WatchMode() == cdc.ModePoll {
		return 100 * time.Millisecond
	}
	return time.Second
}

// checkNATS validates the external server's settings: given only with
// nats-url, cert and key together, files that exist.
func (c *Config) checkNATS() []error {
	var errs []error
	files := map[string]string{"nats-creds": c.NATSCreds, "nats-tls-cert": c.NATSTLSCert, "nats-tls-key": c.NATSTLSKey, "nats-tls-ca": c.NATSTLSCA}
	for name, p := range files {
		if p == "" {
			continue
		}
		if c.NATSURL == "" {
			errs = append(errs, fmt.Errorf("%s is given without nats-url (the embedded server needs neither)", name))
		}
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if (c.NATSTLSCert == "") != (c.NATSTLSKey == "") {
		errs = append(errs, errors.New("nats-tls-cert and nats-tls-key go together"))
	}
	return errs
}

// finishSubjectPrefix fills the default subject prefix and validates it.
func (c *Config) finishSubjectPrefix() error {
	if c.SubjectPrefix == "" {
		if c.NATSURL == "" {
			c.SubjectPrefix = stream.DefaultPrefix
		} else {
			c.SubjectPrefix = stream.PrefixFor(c.DB)
		}
	}
	if err := stream.CheckPrefix(c.SubjectPrefix); err != nil {
		return fmt.Errorf("subject-prefix: %w", err)
	}
	return nil
}

// maxInstanceID bounds an instance id (it is in every notification).
const maxInstanceID = 64

// finishInstanceID fills the default instance id and validates it.
func (c *Config) finishInstanceID() error {
	if c.InstanceID == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "mvd"
		}
		sum := sha256.Sum256([]byte(c.StateDir))
		c.InstanceID = instanceSafe(host) + "-" + hex.EncodeToString(sum[:4])
	}
	if len(c.InstanceID) > maxInstanceID || sanitizeID(c.InstanceID) != c.InstanceID {
		return fmt.Errorf("instance-id %q: want 1 to %d letters, digits, '.', '_' and '-'", c.InstanceID, maxInstanceID)
	}
	return nil
}

// instanceSafe is a host name made fit for an instance id, leaving room
// for the default's hash.
func instanceSafe(s string) string {
	s = sanitizeID(s)
	if len(s) > maxInstanceID-9 {
		s = s[:maxInstanceID-9]
	}
	return s
}

// sanitizeID replaces the bytes an instance id does not take by '-'.
func sanitizeID(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}

// checkSizes validates the size settings: each parses, and the streams
// fit in the embedded server's store (JetStream would refuse them).
func (c *Config) checkSizes() []error {
	var errs []error
	for name, v := range map[string]string{"nats-max-store": c.NATSMaxStore, "nats-changes-max-bytes": c.NATSChangesMaxBytes,
		"nats-refresh-max-bytes": c.NATSRefreshMaxBytes, "memory-limit": c.MemoryLimit} {
		if _, err := parseSize(v); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", name, v, err))
		}
	}
	store, changes, refresh := c.NATSLimits()
	if len(errs) == 0 && c.NATSURL == "" && store > 0 && changes+refresh > store {
		errs = append(errs, fmt.Errorf("nats-changes-max-bytes %s + nats-refresh-max-bytes %s do not fit in nats-max-store %s",
			c.NATSChangesMaxBytes, c.NATSRefreshMaxBytes, c.NATSMaxStore))
	}
	return errs
}

// parseSize reads a size such as "256MiB" or "1GB" ("" is 0).
func parseSize(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := humanize.ParseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("want a size such as 256MiB: %w", err)
	}
	if n == 0 || n > math.MaxInt64 {
		return 0, errors.New("want a size such as 256MiB, above zero")
	}
	return int64(n), nil
}

// NATSLimits are the sizes of nats-max-store, nats-changes-max-bytes and
// nats-refresh-max-bytes in bytes (0 where unset: package stream's
// defaults).
func (c Config) NATSLimits() (maxStore, changes, refresh int64) {
	maxStore, _ = parseSize(c.NATSMaxStore)
	changes, _ = parseSize(c.NATSChangesMaxBytes)
	refresh, _ = parseSize(c.NATSRefreshMaxBytes)
	return maxStore, changes, refresh
}

// CompactPolicy is the compaction policy of views that set none.
func (c Config) CompactPolicy() matview.CompactPolicy {
	return matview.CompactPolicy{SmallFragments: c.CompactSmallFragments, DeletedPercent: c.CompactDeletedPercent}
}

// WritebackAfter is the watcher's cdc.Options.WritebackAfter for the
// SourceWriteback setting: cdc's default delay, or never.
func (c Config) WritebackAfter() time.Duration {
	if c.SourceWriteback {
		return 0
	}
	return -1
}

// WatchMode is the parsed Watch setting: always polling on an object
// store, which has no change events.
func (c Config) WatchMode() cdc.Mode {
	m, _ := cdc.ParseMode(c.Watch)
	if c.Remote() {
		return cdc.ModePoll
	}
	return m
}
