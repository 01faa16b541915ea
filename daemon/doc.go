// Package daemon is the serve process of mvd: everything `mvd serve`
// wires together, independent of how views are refreshed and how messages
// travel, through small interfaces.
//
//   - Config: flags > MVD_* environment > YAML file (LoadConfig, BindFlags);
//     `mvd serve --check-config` validates and prints it (Command).
//   - Locks and serve.json (package serveinfo, shared with the clients
//     that find the daemon): the state directory's and the database's
//     flocks, and STATE/serve.json, written at start, removed on clean exit.
//   - Admin: /healthz, /readyz (Server.Ready) and /metrics (Metrics, on
//     a registry of its own).
//   - Owner: one goroutine per view that refreshes it as its matview.Policy says
//     (on-commit, interval, manual; debounce; freshness target), coalescing
//     a backlog of wake-ups into one refresh, backing off on errors, and
//     running the view's maintenance step between refreshes.
//   - Server: lock, admin, Bus, serve.json, the cdc watcher, and an Owner
//     for every view of the Catalog. The watcher's change sets are
//     published; with a FeedBus each owner is fed by its view's durable
//     consumer (Feed, Delivery: coalesced against the watermark, acked
//     after the view commit), and the watcher wakes an owner directly
//     only while its feed is down or a change set was not published;
//     those are kept as version spans and republished, recomputed from
//     the source (ChangeSource), once NATS is back. At a view's start,
//     refresh commits made after its last notification are notified.
//   - History: refresh records, batched off the refresh path by a writer
//     goroutine, served back on the admin server.
//   - Metrics: per-view series labelled with the view's source, and
//     mvd_view_staleness_seconds computed at scrape time.
//   - Signals: the first SIGINT/SIGTERM drains (no refresh is cut
//     mid-commit), a second stops refreshes in flight too, which is safe
//     because a view commit is atomic.
//
// Views (package matview) enter through Catalog, Refresher and
// ChangeSource; JetStream (package stream) through Bus; the messages are
// package message's. All are optional, so the shell runs and is tested
// on its own; package daemon/wire adapts the real ones.
package daemon
