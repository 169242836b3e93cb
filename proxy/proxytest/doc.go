// Package proxytest starts whole Portcullis instances for end-to-end tests:
// a system store on a fresh database of the requested engine, seeded like
// `portcullis init`, served by an httptest server, and a small client that
// speaks the API with the right headers.
package proxytest
