// Package stream carries mvd's events on NATS JetStream: change sets from
// the watcher to the views' refreshers, and refresh notifications from the
// refreshers to subscribers. docs/messages.md documents the subjects and
// the message schema for programs outside mvd.
//
// # Servers
//
// StartServer runs an embedded nats-server in the daemon's process, with
// its JetStream store under a given directory, listening on loopback only
// and requiring a generated token. Connect reaches that server, or an
// external server or cluster, by URL (token, credentials file, TLS).
//
// # Subjects
//
//	mvd.cdc.<source>          change sets (stream MVD_CDC), deduplicated by
//	                          Nats-Msg-Id "<source>:<incarnation>:<from>-<to>"
//	mvd.view.<view>.refreshed refresh notifications (stream MVD_VIEWS)
//
// "mvd" is the default prefix; Subjects sets another (PrefixFor derives
// one from a database, as mvd serve does with an external server).
//
// Names are made subject-safe by EncodeToken (percent-encoding of every
// byte outside A-Z a-z 0-9 _ -).
//
// # When NATS goes away
//
// JetStream is the fan-out and the wake-up, never the record: a view's
// own commit holds its watermark. So the API never waits for a lost
// server: while disconnected, PublishChangeSet, PublishRefresh and
// ViewConsumer.Fetch fail at once with an error wrapping ErrUnavailable
// (a publish in flight fails within its deadline), and nothing is queued.
// Callers keep going (a refresher computes its changes from the source)
// and the Conn reconnects by itself, forever, re-creating subscriptions;
// durable consumers and stored messages survive on the server. After a
// reconnect the watcher may republish the ranges it could not publish:
// the server drops those it already has (within the duplicate window) and
// consumers skip any whose target their view already reflects.
package stream
