// Package httpapi is the server side of mvd's control API: the routes
// under /v1/ that `mvd serve` answers on its admin listener (views, their
// refreshes, SQL), their JSON shapes (those of the CLI's --json outputs)
// and its errors, {"error":"…","code":N} with a 4xx or 5xx status, where
// code is the exit status the CLI gives for the same failure (1 failure,
// 2 usage, 3 conflict). The daemon wraps it with the bearer-token check
// and the body limit; package control/client is its client.
package httpapi
