package stream

import "testing"

// TestRedactURL: every URL of a list loses its user info, whatever form
// it takes; URLs without any stay as they are.
func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://s3cret@127.0.0.1:4222", "nats://***@127.0.0.1:4222"},
		{"nats://user:pa@ss@h:1", "nats://***@h:1"},
		{"nats://t@a:1,nats://b:2,tls://t@c:3", "nats://***@a:1,nats://b:2,tls://***@c:3"},
		{"", ""},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
