package sqldb

import "time"

// SetSchemaRetryAge changes how old the cached schema must be before an
// unknown table makes a request read it again, for tests.
func SetSchemaRetryAge(d time.Duration) (restore func()) {
	old := schemaRetryAge
	schemaRetryAge = d
	return func() { schemaRetryAge = old }
}

// CachedStatements is the number of prepared read statements b keeps.
func CachedStatements(b any) int {
	c := b.(*Backend).stmts.Load()
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// CachedListReads is the number of compiled list reads b keeps for its
// current schema.
func CachedListReads(b any) int {
	c := b.(*Backend).schema.Load()
	if c == nil {
		return 0
	}
	c.reads.mu.RLock()
	defer c.reads.mu.RUnlock()
	return len(c.reads.m)
}

// SetRawBodies turns keeping a POST body of one record as text (body.go)
// on or off, for tests comparing the fast path with the general one.
func SetRawBodies(on bool) (restore func()) {
	old := rawBodies
	rawBodies = on
	return func() { rawBodies = old }
}

// LiteStatements is the number of statements the SQLite fast reads keep
// prepared on b's connections (litefast.go); call it with no read running.
func LiteStatements(b any) int {
	n := 0
	b.(*Backend).lite.Range(func(_, v any) bool {
		n += len(v.(*liteConn).stmts)
		return true
	})
	return n
}

// SetNativeMy turns the MySQL fast reads on the driver (myfast.go) on or
// off, for tests comparing them with database/sql's.
func SetNativeMy(on bool) (restore func()) {
	old := nativeMy
	nativeMy = on
	return func() { nativeMy = old }
}

// SetLiteWrites turns running the POST of one record on SQLite's driver
// (litecreate.go) on or off, for tests comparing it with database/sql's.
func SetLiteWrites(on bool) (restore func()) {
	old := liteWrites
	liteWrites = on
	return func() { liteWrites = old }
}
