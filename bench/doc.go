// Command bench is Portcullis's load harness: it starts a Portcullis
// instance and a hand-written baseline server in one process, seeds a
// database on every engine available, drives the same calls at both with a
// load generator in a child process (wrk for the max-rate rounds when it is
// installed, else vegeta; vegeta for the paced runs) over loopback, and prints
// throughput, latency, allocations, CPU time and peak memory side by side
// with the ratio Portcullis/baseline.
//
//	go run ./bench                       # every scenario, SQLite (+ PostgreSQL/MySQL when their DSNs are set)
//	go run ./bench -quick                # a smoke run
//	go run ./bench -scenarios page25 -engines pgsql -profile /tmp/prof
//
// See README.md for how to read the table and the last figures.
//
// bench imports public packages only (proxy, dialects); it is a program,
// not a library.
package main
