//go:build !race

package cdc

const raceEnabled = false
