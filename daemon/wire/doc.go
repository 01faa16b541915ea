// Package wire connects the daemon to the rest of mvd: package matview
// (the views: daemon.Catalog and daemon.Refresher), package stream
// (JetStream: daemon.Bus) and package checkpoint (Badger: daemon.History).
// Package daemon itself knows none of them, so it is tested on its own;
// this package is the adapter layer `mvd serve` uses.
package wire
