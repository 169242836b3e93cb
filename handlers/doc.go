// Package handlers holds every stage of the Portcullis pipeline, one package
// each, and [Chain], which composes them.
//
// A stage is a func(http.Handler) http.Handler built by its package's New
// from an Options value; New validates and returns an error, it never
// panics and never quietly switches security off. An operator assembling a
// stack of their own finds every stage here:
//
//	recoverer → requestid → accesslog → cors → apikey → session → rbac → ratelimit → script
//
// # Assembling a stack in Go
//
// Every stage works without a system database: apikey takes a static set
// of apps (apikey.NewStatic), ratelimit a static list of limits
// (ratelimit.Static, counters in memory or Redis), rbac roles written in Go
// (rbac.Static).
// Compose them with [Chain] in front of any http.Handler, such as a single
// backend (rws.New puts a reverse proxy to any URL behind them):
//
//	h := handlers.Chain(recover, reqID, keys, rate)(upstream)
//
// The stages put the caller's identity in the request context
// (proxy/caller), where later stages and the final handler read it. See
// the Chain example and examples/custom-stack for a complete program;
// proxy.New assembles the whole pipeline from a system database instead.
//
// Stages import the proxy leaves (apierr, caller), proxy/service,
// proxy/store and the engine they front; never a backend, another stage or
// the proxy root.
package handlers
