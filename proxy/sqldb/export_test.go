package sqldb

import "time"

// SetSchemaRetryAge changes how old the cached schema must be before an
// unknown table makes a request read it again, for tests.
func SetSchemaRetryAge(d time.Duration) (restore func()) {
	old := schemaRetryAge
	schemaRetryAge = d
	return func() { schemaRetryAge = old }
}
