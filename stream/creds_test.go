package stream

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"
)

// An external server in operator (decentralized JWT) mode: a user's
// credentials file gets in, and JetStream works for its account; a user
// of an account the operator did not sign is refused.
func TestExternalServerCredsFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a nats-server process")
	}
	dir := t.TempDir()
	operator, _ := nkeys.CreateOperator()
	opPub, _ := operator.PublicKey()
	opJWT, err := jwt.NewOperatorClaims(opPub).Encode(operator)
	if err != nil {
		t.Fatal(err)
	}
	account := func(jetstream bool, signer nkeys.KeyPair) (nkeys.KeyPair, string, string) {
		kp, _ := nkeys.CreateAccount()
		pub, _ := kp.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		if jetstream {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
		}
		tok, err := ac.Encode(signer)
		if err != nil {
			t.Fatal(err)
		}
		return kp, pub, tok
	}
	appKP, appPub, appJWT := account(true, operator)
	_, sysPub, sysJWT := account(false, operator)
	creds := func(name string, acc nkeys.KeyPair) string {
		user, _ := nkeys.CreateUser()
		pub, _ := user.PublicKey()
		seed, _ := user.Seed()
		tok, err := jwt.NewUserClaims(pub).Encode(acc)
		if err != nil {
			t.Fatal(err)
		}
		data, err := jwt.FormatUserConfig(tok, seed)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name+".creds")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := creds("app", appKP)
	rogue, _ := nkeys.CreateAccount() // never registered with the server
	bad := creds("rogue", rogue)

	port := freePort(t)
	conf := filepath.Join(dir, "server.conf")
	cfg := fmt.Sprintf(`listen: "127.0.0.1:%d"
jetstream: { store_dir: %q }
operator: %q
system_account: %q
resolver: MEMORY
resolver_preload: {
  %s: %q
  %s: %q
}
`, port, filepath.Join(dir, "js"), opJWT, sysPub, appPub, appJWT, sysPub, sysJWT)
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	launchExternal(t, []string{"-c", conf}, ConnectOptions{URL: url, CredsFile: good})

	ctx := testCtx(t)
	c := connect(t, ConnectOptions{URL: url, CredsFile: good})
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishChangeSet(ctx, step(1, []uint64{1}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(ctx, ConnectOptions{URL: url, CredsFile: bad}); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("rogue credentials: %v, want ErrUnauthorized", err)
	}
	if _, err := Connect(ctx, ConnectOptions{URL: url}); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("no credentials: %v, want ErrUnauthorized", err)
	}
	if _, err := Connect(ctx, ConnectOptions{URL: url, CredsFile: filepath.Join(dir, "missing.creds")}); err == nil ||
		!strings.Contains(err.Error(), "missing.creds") {
		t.Fatalf("missing creds file: %v", err)
	}
}
