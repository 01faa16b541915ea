package stream

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all PEM, into dir.
type testPKI struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newTestPKI(t *testing.T, dir string) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mvd test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p := testPKI{ca: filepath.Join(dir, "ca.pem")}
	writePEM(t, p.ca, "CERTIFICATE", caDER)
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		keyDER, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		cert, keyFile := filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
		writePEM(t, cert, "CERTIFICATE", der)
		writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
		return cert, keyFile
	}
	p.serverCert, p.serverKey = issue("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// An external server that requires mutual TLS: connecting with the CA and
// a client certificate works; without the client certificate it does not.
func TestExternalServerMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a nats-server process")
	}
	pki := newTestPKI(t, t.TempDir())
	tls := TLSOptions{CAFile: pki.ca, CertFile: pki.clientCert, KeyFile: pki.clientKey}
	e := startExternalWith(t, t.TempDir(), freePort(t), "tok", tls,
		"--tls", "--tlscert", pki.serverCert, "--tlskey", pki.serverKey, "--tlsverify", "--tlscacert", pki.ca)
	ctx := testCtx(t)
	c := connect(t, ConnectOptions{URL: e.url, Token: "tok", TLS: tls})
	if err := c.EnsureStreams(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PublishChangeSet(ctx, step(1, []uint64{1}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	noCert, err := Connect(ctx, ConnectOptions{URL: e.url, Token: "tok", TLS: TLSOptions{CAFile: pki.ca}})
	if err == nil {
		noCert.Close()
		t.Fatal("connected without a client certificate to a server that requires one")
	}
	if _, err := Connect(ctx, ConnectOptions{URL: e.url, Token: "tok", TLS: TLSOptions{CertFile: pki.clientCert}}); err == nil {
		t.Fatal("a cert without a key was accepted")
	}
	if _, err := Connect(ctx, ConnectOptions{URL: e.url, Token: "tok", TLS: TLSOptions{CAFile: filepath.Join(t.TempDir(), "missing.pem")}}); err == nil || errors.Is(err, ErrUnauthorized) {
		t.Fatalf("a missing CA file: %v", err)
	}
}
