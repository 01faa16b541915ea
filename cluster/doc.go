// Package cluster lets several `mvd serve` instances share one database
// and one NATS (server or cluster): it keeps each instance's membership
// and gives every view, and every source table, exactly one active holder
// at a time through leases in a JetStream key-value bucket.
//
// # Bucket
//
// One KV bucket per database, named under its subject prefix
// (stream.Subjects.Bucket(BucketSuffix)), with a bucket TTL (MaxAge): every key lapses TTL after its last
// write, so the keys of an instance killed with kill -9 disappear by
// themselves. Keys:
//
//	member.<id>            one per live instance: its Member, as JSON, rewritten every Renew
//	lease.view.<name>      the instance running the view's owner, as JSON (Lease)
//	lease.source.<name>    the instance watching the source and publishing its change sets
//
// Names are encoded by EncodeKey (a KV key takes few bytes as they are).
//
// # Leases
//
// A lease is taken with Create (a compare-and-set: it fails while
// another holds the key), renewed every Renew with Update at the revision
// the holder last wrote (it fails once the key lapsed or was taken), and
// released with a Delete at that revision. A renewal refused is settled
// by reading the key, every step with a timeout of its own: its own
// renewal that landed unacknowledged goes on from there, a lapsed key is
// taken again, and only a key naming another holder is a lost lease; a
// step without an answer (a JetStream slowed down by R3 consumers being
// created by the hundred) keeps the lease until the next check. Which instance should hold a
// name is Preferred: rendezvous (highest random weight) hashing over the
// live members, so names spread evenly, only the names of a member that
// joins or leaves move, and nothing moves while membership is stable. A
// member is live while its member key is rewritten: the watch of
// member.> delivers every heartbeat, and a member unheard of for TTL is
// gone. An instance tries to take a name only when it is the preferred
// live member; a holder that is not the preferred one any more releases
// the name once the preferred member has been live for a while (so it is
// there to take it) — never while membership changes under it.
//
// A lease is advisory, not a fence: an instance cut off from NATS keeps
// the leases it holds (a refresh never waits on NATS) until it learns,
// connected again, that they lapsed. Two instances may then both believe
// they own a view for a moment; Lance's conditional commit is the fence
// (one of the two commits of a source step fails with a conflict).
//
// # Concurrency
//
// A Cluster is safe for concurrent use. Run owns its goroutine (the
// heartbeat, the leases and the membership watch) and returns once ctx is
// done, after releasing every lease and the member key; OnChange is
// called from it and must not block for long.
package cluster
