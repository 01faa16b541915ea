package daemon

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/mvd-project/mvd/control/httpapi"
)

// adminTokenEnv is the environment variable that gives the admin token
// without a file (the file, --admin-token-file, wins when both are set).
const adminTokenEnv = "MVD_ADMIN_TOKEN"

// envValue is the value of variable name in environ ("" if unset).
func envValue(environ []string, name string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// checkAdminToken reads --admin-token-file into AdminToken and refuses an
// admin address other than loopback without a token: the control API
// changes views, and anyone who can reach the port could.
func (c *Config) checkAdminToken() []error {
	if c.AdminTokenFile != "" {
		b, err := os.ReadFile(c.AdminTokenFile)
		if err != nil {
			return []error{fmt.Errorf("admin-token-file: %w", err)}
		}
		c.AdminToken = strings.TrimSpace(string(b))
		if c.AdminToken == "" {
			return []error{fmt.Errorf("admin-token-file %s is empty", c.AdminTokenFile)}
		}
	}
	c.AdminToken = strings.TrimSpace(c.AdminToken)
	host, _, _ := net.SplitHostPort(c.AdminAddr)
	if c.AdminToken == "" && !isLoopback(host) {
		return []error{fmt.Errorf("admin-addr %s is not a loopback address: the admin HTTP server then needs a bearer token "+
			"(--admin-token-file FILE or %s); refusing to serve the control API to the network without one", c.AdminAddr, adminTokenEnv)}
	}
	return nil
}

// isLoopback reports whether host names only the loopback interface: an
// empty host or 0.0.0.0 listens on every interface, and a name other
// than localhost may resolve anywhere, so neither is.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errAdminToken is the answer to a request without the admin token.
var errAdminToken = errors.New("missing or wrong bearer token (Authorization: Bearer TOKEN; the daemon's --admin-token-file or MVD_ADMIN_TOKEN)")

// requireToken answers 401 to every request that does not carry token as
// "Authorization: Bearer TOKEN", before h sees it (so it changes
// nothing). The comparison takes the same time wherever the tokens
// differ. An empty token requires nothing (a loopback listener).
func requireToken(h http.Handler, token string) http.Handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mvd"`)
			httpapi.WriteError(w, http.StatusUnauthorized, 1, errAdminToken)
			return
		}
		h.ServeHTTP(w, r)
	})
}
