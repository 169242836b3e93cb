// Command postgres-system runs two Portcullis instances that share one
// PostgreSQL system database and one Redis, as a load-balanced deployment
// does: a change made through either instance (a new service, a role, a
// limit) reaches the other within a second, and rate-limit counters are
// counted once for both.
//
//	go run ./examples/postgres-system \
//	    -system-db 'postgres://postgres@127.0.0.1:5432/portcullis?sslmode=disable' \
//	    -redis redis://127.0.0.1:6379/0
//
// In production each instance is its own process on its own machine
// (`portcullis serve --system-db … --redis …`); this program starts both in
// one process to show the embedding API that does the same.
package main
