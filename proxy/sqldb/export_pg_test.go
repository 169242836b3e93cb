package sqldb

// SetNativePG turns reading pages and lists on PostgreSQL through pgx
// itself (pglist.go) on or off, for tests comparing it with database/sql.
func SetNativePG(on bool) (restore func()) {
	old := pgNative
	pgNative = on
	return func() { pgNative = old }
}
