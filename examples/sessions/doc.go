// Command sessions shows the session stage in a stack with no system
// database: the program issues its own session tokens from Go code
// (HMAC-signed, with an expiry), and handlers/session verifies them
// through its Verifier interface, adding the user and their role to the
// caller identity the API key stage started.
//
//	go run ./examples/sessions -addr 127.0.0.1:8080
//
// It prints an API key and a token for a demo user; a request with both
// reaches /api/me, which answers who called.
package main
