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
// Stages import the proxy leaves (apierr, caller), proxy/service,
// proxy/store and the engine they front; never a backend, another stage or
// the proxy root.
package handlers
