# mvd — developer entry points. `make test` is what CI runs (.ci/run).
SHELL := /bin/bash
GO ?= go
NPM ?= npm
HARNESS := testdata/lancedb
LANCEDB_STAMP := $(HARNESS)/node_modules/.mvd-installed
DEMO_DIR := .cache/demo
FUZZTIME ?= 20s
BENCHTIME ?= 1x
GOTEST_FLAGS ?=
BIN ?= bin/mvd
# What `mvd version` reports; the Go toolchain's own VCS stamp is missing in
# git worktrees and with -buildvcs=false, so make passes it explicitly.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
MODIFIED ?= $(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)
LDFLAGS := -X main.linkedVersion=$(VERSION) -X main.linkedCommit=$(COMMIT) -X main.linkedModified=$(MODIFIED)

.PHONY: all build deps run run-tables test vet lint fmt-check unit fuzz bench fixtures proto clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/mvd

# deps installs everything the tests need: Go modules and the pinned LanceDB
# (npm install, not npm ci: LanceDB's binaries for other platforms are not
# served here, so a lock file cannot be honoured).
deps: $(LANCEDB_STAMP)
	$(GO) mod download

$(LANCEDB_STAMP): $(HARNESS)/package.json
	cd $(HARNESS) && $(NPM) install --no-audit --no-fund --loglevel=error
	touch $@

# run builds mvd and shows the daemon at work on a demo database: LanceDB
# creates a source and a view, mvd a second view, `mvd serve` keeps both
# fresh while a LanceDB writer commits small batches, and `mvd subscribe`
# prints every refresh. Ctrl-C stops it all; without a terminal it stops
# after 20 s (DEMO_SECONDS=N to choose, 0 = until Ctrl-C). See README.md.
run: build deps
	@$(if $(DEMO_SECONDS),DEMO_SECONDS=$(DEMO_SECONDS)) $(if $(DEMO_GAP_MS),DEMO_GAP_MS=$(DEMO_GAP_MS)) MVD=$(BIN) scripts/run-demo.sh

# run-tables shows mvd's table commands on a demo table that LanceDB writes:
# its versions, its schema, the change set of every commit and a SQL scan.
run-tables: build deps
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	@echo "== LanceDB writes a demo table with a history of commits into $(DEMO_DIR)"
	@cd $(HARNESS) && node gen.mjs --out $(CURDIR)/$(DEMO_DIR) --only history_stable_v22 --no-answers > /dev/null
	@t=$(DEMO_DIR)/history_stable_v22.lance; \
	echo "== mvd table versions $$t"; ./bin/mvd table versions $$t; \
	echo; echo "== mvd table schema $$t"; ./bin/mvd table schema $$t; \
	last=$$(./bin/mvd table versions $$t --json | tail -1 | sed 's/.*"version":\([0-9]*\).*/\1/'); \
	for ((v = 1; v < last; v++)); do \
		echo; echo "== mvd table changes $$t --from $$v --to $$((v + 1))"; \
		./bin/mvd table changes $$t --from $$v --to $$((v + 1)) | cut -c1-160; \
	done; \
	echo; echo "== mvd table scan $$t --select \"id, upper(name) AS shout, val * 100 AS cents\" --where \"val > 900\" --with-row-ids --format table --limit 5"; \
	./bin/mvd table scan $$t --select "id, upper(name) AS shout, val * 100 AS cents" --where "val > 900" --with-row-ids --format table --limit 5

# test is the whole check: formatting, vet, and every test with the race
# detector, including the differential tests against LanceDB; then the
# 100k-row data-file differential test (every type, multi-page columns) in
# LanceDB's default file format 2.2 (make bench runs 2.0 and 2.1 too),
# without the race detector, which would only slow its decoding down, and
# the daemon's memory-return test, which reads RSS (under -race that is
# mostly shadow memory, so it skips itself there).
test: deps fmt-check vet
	$(GO) test -race -timeout 15m $(GOTEST_FLAGS) ./...
	MVD_LANCEDB_BIG=1 MVD_LANCEDB_BIG_FORMATS=2.2 $(GO) test -count=1 -timeout 20m -run '^TestLanceDBTypesBig$$' ./lance/datafile
	$(GO) test -count=1 -timeout 5m -run '^TestMemoryReturnedAfterBurst$$' ./daemon

vet:
	$(GO) vet ./...

# lint checks the size limits of the product layers (no non-test function
# over 80 lines, no non-test file over 600 lines); make test runs it too,
# as part of ./...
lint: fmt-check vet
	$(GO) test -count=1 ./internal/codelimits

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	if [ -n "$$out" ]; then echo "gofmt would change: $$out"; exit 1; fi

# fuzz runs every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$target"; \
			$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

# bench runs the benchmarks (they generate their LanceDB tables on the fly;
# bench/BenchmarkViewRefresh, 5M rows, keeps its source in .cache/bench-views;
# bench/BenchmarkSoak makes MVD_SOAK_REFRESHES refreshes, 10,000 by default;
# bench/BenchmarkMaintenance 5,000 LanceDB commits under the daemon, 30-50
# minutes on a loaded 2-core machine, hence the longer timeout;
# every scenario file and the differential sample also run on S3).
bench: deps
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -benchmem -timeout 180m ./...
	MVD_DIFF_FULL=1 $(GO) test -run '^TestDifferentialOpSequences$$' -count=1 -timeout 60m ./matview/
	MVD_S3_ALL=1 $(GO) test -run '^(TestScenariosOnS3|TestDifferentialOnS3)$$' -count=1 -timeout 60m ./matview/
	MVD_LANCEDB_BIG=1 $(GO) test -count=1 -timeout 30m -run '^TestLanceDBTypesBig$$' ./lance/datafile
	MVD_CLUSTER_LONG=1 $(GO) test -count=1 -timeout 10m -run '^TestNodeLoss$$' ./cluster

# fixtures regenerates the committed fixture tables and LanceDB's answers.
fixtures: deps
	cd $(HARNESS) && node gen.mjs --out $(CURDIR)/testdata/fixtures --force

# proto regenerates the Go code of lance/internal/pb (needs protoc).
proto:
	lance/internal/pb/generate.sh

clean:
	rm -rf bin .cache
