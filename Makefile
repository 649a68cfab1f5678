# streamdb: see README.md.
GO        ?= go
BIN       := bin/streamdb
# The tests build the server binary once and share it.
export STREAMDB_BIN := $(abspath $(BIN))

.PHONY: build run test test-unit test-e2e vet fmt bench bench-100m fuzz props queries views-churn cluster-faults clean

# The version and commit that `streamdb --version` prints.
VERSION   ?= $(shell git describe --tags --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git describe --always --dirty --abbrev=12 --match=no-tag-matches 2>/dev/null)
LDFLAGS   := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/streamdb

run: build
	./$(BIN)

# Unit tests with the race detector, then the end-to-end suites against a
# real server process (sqllogictest files, drivers, PostgreSQL comparison).
test: build vet
	$(GO) test -race -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (echo "gofmt needed:"; gofmt -l .; exit 1)

fmt:
	gofmt -w $$(git ls-files '*.go')

# Benchmarks report numbers (bench/results/), never assert them.
# BENCH_MODE=quick (about 12 minutes) or full (about an hour);
# BENCH=Nexmark (a -bench pattern) runs one benchmark only.
BENCH_MODE ?= quick
BENCH ?= .
bench: build
	BENCH_MODE=$(BENCH_MODE) $(GO) test -run '^$$' -bench '$(BENCH)' -benchtime 1x -timeout 120m ./bench/

# Issue 18's 100M-key aggregate (bench/ingest; bench/README.md): one GROUP
# BY over AGG_KEYS distinct keys under the server's default settings, its
# peak RSS and catch-up rate. Takes about 18 GB of disk under TMPDIR and
# most of an hour on 2 cores (bench/README.md); not part of make bench.
# AGG_KEYS=1000000 checks it in a minute.
AGG_KEYS ?= 100000000
bench-100m:
	INGEST_VIEWS=groupby INGEST_RAW=0 INGEST_RSS_EVERY=1m INGEST_CHECKPOINT_INTERVAL=1s \
	INGEST_EVENTS=$(AGG_KEYS) INGEST_KEYS=$(AGG_KEYS) \
	$(GO) test -run '^$$' -bench Ingest -benchtime 1x -timeout 300m -v ./bench/ingest/

# Go native fuzzing: each target below runs for FUZZTIME, one after another
# (go test -fuzz takes one package and one target at a time). A failing
# input is written to the package's testdata/fuzz/<target>/, where plain
# `go test` (and so make test) runs it from then on. FUZZFLAGS adds go test
# flags, e.g. FUZZFLAGS='-parallel 1' on a shared machine.
FUZZTIME ?= 10m
FUZZFLAGS ?=
FUZZ_TARGETS := ./pgwire:FuzzServerConn ./front:FuzzParse ./exec:FuzzDecode ./exec:FuzzDecodeRawPaths ./storage/keyenc:FuzzKeyenc \
	./pgcopy:FuzzCopyRoundTrip ./pgcopy:FuzzCopyDecode
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "== $$name in $$pkg for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s $(FUZZFLAGS) $$pkg; \
	done

# Property tests against PostgreSQL 15 (tests/props) at a long size:
# PROP_CASES random cases per test; STREAMDB_PROP_SEED=N replays a seed.
PROP_CASES ?= 20000
props: build
	STREAMDB_PROP_SEED=$${STREAMDB_PROP_SEED:-random} STREAMDB_PROP_CASES=$(PROP_CASES) $(GO) test -count=1 -timeout 120m -v -run 'TestValues|TestOperators|TestAggregates|TestJSON' ./tests/props/

# The query generator (tests/props TestQueries and TestQueriesAsViews) at
# full size: QUERY_CASES generated SELECTs compared with PostgreSQL 15, and
# a quarter as many as materialized views through DML rounds (make test
# runs 1,000 and 100); STREAMDB_PROP_SEED=N replays a seed.
QUERY_CASES ?= 2000
queries: build
	STREAMDB_PROP_SEED=$${STREAMDB_PROP_SEED:-random} STREAMDB_PROP_CASES=$(QUERY_CASES) $(GO) test -count=1 -timeout 240m -v -run 'TestQueries' ./tests/props/

# Views with subqueries (tests/props TestSubqueryViewsChurn) created and
# dropped while both their input tables change, CHURN_ROUNDS rounds (make
# test runs 3); STREAMDB_PROP_SEED=N replays a seed's statements.
CHURN_ROUNDS ?= 200
views-churn: build
	STREAMDB_PROP_SEED=$${STREAMDB_PROP_SEED:-random} STREAMDB_CHURN_ROUNDS=$(CHURN_ROUNDS) $(GO) test -count=1 -timeout 120m -v -run 'TestSubqueryViewsChurn' ./tests/props/

# Fault rounds on a three-server cluster (tests/cluster
# TestClusterFaultRounds): FAULT_ROUNDS rounds of kill -9 or SIGSTOP of
# the coordinator or a member under writes (make test runs 3);
# STREAMDB_FAULT_SEED=N replays a seed's choices.
FAULT_ROUNDS ?= 10
cluster-faults: build
	STREAMDB_FAULT_ROUNDS=$(FAULT_ROUNDS) $(GO) test -count=1 -timeout 30m -v -run '^TestClusterFaultRounds$$' ./tests/cluster/

clean:
	rm -rf bin streamdb-data
