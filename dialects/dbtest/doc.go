// Package dbtest gives tests a fresh, isolated database on every engine
// available on the machine: SQLite always, PostgreSQL when
// PORTCULLIS_TEST_PG is set, MySQL/MariaDB when PORTCULLIS_TEST_MYSQL is set
// (both in the contract's DSN forms). Each call creates a new database and
// drops it when the test ends, so packages may run their tests in parallel
// against the same servers.
package dbtest
