#!/usr/bin/env bash
# Regenerates the Go code of mvd's Lance protobuf descriptions. The generated
# files are committed, so builds never need protoc; run this (make proto) only
# after editing a .proto. Needs protoc (Debian: protobuf-compiler) and
# protoc-gen-go at the version of google.golang.org/protobuf in go.mod.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$(go env GOPATH)/bin:$PATH"
command -v protoc-gen-go >/dev/null || go install google.golang.org/protobuf/cmd/protoc-gen-go
for dir in */; do
  dir=${dir%/}
  ls "$dir"/*.proto >/dev/null 2>&1 || continue
  protoc -I . --go_out=. --go_opt=paths=source_relative "$dir"/*.proto
done
