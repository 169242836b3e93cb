// Command embed shows Portcullis mounted inside an existing net/http
// program: the program keeps its own routes (/, /hello) and serves the
// whole Portcullis API under /portcullis/ on the same server.
//
//	go run ./examples/embed -data ./data -addr 127.0.0.1:8080
//
// On its first run it seeds the data directory (a SQLite system database,
// the built-in services and an administrator) and prints the admin API key.
package main
