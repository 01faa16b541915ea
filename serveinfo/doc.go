// Package serveinfo is what the serve process and the commands that look
// for it (mvd subscribe, mvd view history) share: the state directory's
// lock (STATE/lock, an flock held for the daemon's life), the database's
// lock (DB/.mvd/serve.lock), and STATE/serve.json, where a running daemon
// says how to reach it. Running asks the lock, not a pid, whether a daemon
// runs. It imports nothing of mvd, so a client need not import the daemon.
package serveinfo
