package vfs

import "errors"

var errIsDir = errors.New("is a directory")
