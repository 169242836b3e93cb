// Package proxy is the composition root of Portcullis and its embedding
// API.
//
// [New] opens (or is given) the system store, builds the service registry
// from its configuration, and assembles the pipeline in one readable place
// (pipeline.go). The returned [*Server] is an http.Handler that serves
// /healthz, /metrics and everything under /api/v2/; a Go program can mount
// it under any path of its own server:
//
//	srv, err := proxy.New(ctx, proxy.Config{DataDir: "./data"})
//	if err != nil { … }
//	defer srv.Close()
//	mux.Handle("/", srv)
//
// Configuration changes made through any instance sharing the system
// database reach every instance within a second: each polls the store's
// configuration version and swaps in a new immutable state (registry,
// backends) with an atomic pointer, closing replaced backends once their
// requests drain.
//
// Only this package wires stages and backends together; they never import
// it or each other.
package proxy
