// Command custom-stack assembles a stack of its own from Portcullis parts,
// with every setting in Go and no system database: API keys checked
// against a fixed set of apps, roles that say which verbs each app may use,
// a rate limit per role, and a reverse proxy to an upstream HTTP API.
//
//	go run ./examples/custom-stack -upstream https://api.example.com -addr 127.0.0.1:8080
//
// Without -upstream it starts a small echo upstream of its own, so it runs
// anywhere.
package main
