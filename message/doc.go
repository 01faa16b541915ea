// Package message holds the two messages mvd publishes, as values and as
// their JSON wire form: the ChangeSet of a source table (on
// mvd.cdc.<source>) and the Notification of a view refresh (on
// mvd.view.<view>.refreshed). It is a leaf: package stream carries them
// over NATS and package daemon builds them, and neither converts one
// shape into another. docs/messages.md describes the wire form and its
// versioning rules; fields are only ever added.
package message
