# Portcullis — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       ?= bin/portcullis
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/portcullis-dev/portcullis/proxy.Version=$(VERSION)
ADDR      ?= 127.0.0.1:8080
export GOTOOLCHAIN ?= local
# Pure Go by default: no C compiler needed to build or run. Only the race
# detector needs cgo, so `make test` turns it on for itself.
export CGO_ENABLED ?= 0

.PHONY: build run demo test test-short bench soak fuzz lint fmt clean

build: ## Build the binary into bin/.
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/portcullis

run: build ## Run a throw-away instance with a sample SQLite database.
	./$(BIN) demo --addr $(ADDR)

demo: run

test: ## Vet and run every test with the race detector (needs cgo and a C compiler).
	$(GO) vet ./...
	CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 15m ./...

test-short: ## Run the tests without the race detector (faster).
	$(GO) test -count=1 ./...

bench: ## Run the load harness against a hand-written baseline, then the pipeline's cost with a large configuration.
	$(GO) run ./bench
	$(GO) test -run XXX -bench PipelineConfigSize -benchtime 3000x ./proxy/

soak: build ## Cluster soak: 3 instances on one PostgreSQL system DB + Redis, faults injected, no acknowledged write lost (SOAK_FLAGS=-duration 5m).
	$(GO) run ./bench/soak -bin $(BIN) $(SOAK_FLAGS)

FUZZTIME ?= 30s
fuzz: ## Run each fuzz target for FUZZTIME (finds land in testdata/fuzz; plain go test replays them).
	@for d in $$(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u); do \
	  for f in $$(grep -h '^func Fuzz' $$d/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/'); do \
	    echo "== $$d $$f"; $(GO) test -run XXX -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -parallel 1 $$d || exit 1; \
	  done; \
	done

STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

lint: ## gofmt, go vet and staticcheck (checks in staticcheck.conf).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
