// Package wire connects the daemon to the rest of mvd: package matview
// (the views: daemon.Catalog, daemon.Refresher, daemon.ChangeSource),
// package stream (JetStream: daemon.Bus, carrying package message's
// change sets and notifications as they are) and package checkpoint
// (Badger: daemon.History). It holds no logic of its own beyond reading
// back what a view's commits record (its watermark's source commit time,
// its refresh commits); package daemon knows none of these packages, so
// it is tested on its own, and this is the adapter layer `mvd serve` uses.
package wire
