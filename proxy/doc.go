// Package proxy is the composition root of Portcullis and its embedding
// API.
//
// [New] opens (or is given) the system store, builds the service registry
// from its configuration, and assembles the pipeline in one readable place
// (pipeline.go). The returned [*Server] is an http.Handler that serves
// /healthz, /metrics, the API docs page at /api/docs/ and everything under
// /api/v2/; a Go program can mount
// it under any path of its own server:
//
//	srv, err := proxy.New(ctx, proxy.Config{DataDir: "./data"})
//	if err != nil { … }
//	defer srv.Close()
//	mux.Handle("/", srv)
//
// Under a path prefix, strip it first; no option is needed (API documents
// and forwarded prefixes are derived from the request line):
//
//	mux.Handle("/portcullis/", http.StripPrefix("/portcullis", srv))
//
// examples/embed is such a program, examples/postgres-system runs two
// instances on one PostgreSQL system database and Redis, and
// examples/custom-stack builds a stack of single stages and a backend
// without any system database (see package handlers).
//
// Configuration changes made through any instance sharing the system
// database reach every instance within a second: each polls the store's
// configuration version and swaps in a new immutable state (registry,
// backends) with an atomic pointer, closing replaced backends once their
// requests drain.
//
// Rate limits: the server holds one limiter.Store for its life (Redis when
// Config.RedisURL is set, so that every instance on the same Redis and
// Config.RedisPrefix shares the counters; else this process's memory) and
// builds a limiter.Engine from the snapshot's limits on every reload, over
// that Store, so counters survive configuration changes. A reload resets the
// counters of limits that were deleted or whose parameters (type, user,
// role, service, endpoint, verb, period) changed; a new rate keeps them, as
// in DreamFactory. The system service's limit_cache reads and resets the
// same Store.
//
// Only this package wires stages and backends together; they never import
// it or each other.
package proxy
