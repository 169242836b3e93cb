package system

import (
	"net/http"
	"testing"

	"github.com/portcullis-dev/portcullis/dialects"
	"github.com/portcullis-dev/portcullis/dialects/dbtest"
	"github.com/portcullis-dev/portcullis/proxy/apierr"
)

// TestDBErrorClassifiesDriverErrors: each engine's raw driver error for a
// duplicate and for a missing reference is a 409 with the system API's
// message; anything else is a 500.
func TestDBErrorClassifiesDriverErrors(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, cfg dialects.Config) {
		db := dbtest.Open(t, cfg)
		ctx := t.Context()
		for _, q := range []string{
			"CREATE TABLE p (id INTEGER PRIMARY KEY, code VARCHAR(10) UNIQUE)",
			"CREATE TABLE c (id INTEGER PRIMARY KEY, p_id INTEGER REFERENCES p(id))",
			"INSERT INTO p (id, code) VALUES (1, 'a')",
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		if cfg.Kind == dialects.SQLite {
			if _, err := db.ExecContext(ctx, "PRAGMA foreign_keys = ON"); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			name, query string
			status      int
			message     string
		}{
			{"duplicate", "INSERT INTO p (id, code) VALUES (2, 'a')", http.StatusConflict, "A record with the same unique value already exists."},
			{"duplicate key", "INSERT INTO p (id, code) VALUES (1, 'b')", http.StatusConflict, "A record with the same unique value already exists."},
			{"missing reference", "INSERT INTO c (id, p_id) VALUES (1, 99)", http.StatusConflict, "The record refers to a record that does not exist, or is referred to by another record."},
			{"syntax", "INSERT INTO nowhere VALUES (1)", http.StatusInternalServerError, ""},
		} {
			_, err := db.ExecContext(ctx, tc.query)
			if err == nil {
				t.Fatalf("%s: no error", tc.name)
			}
			ae, ok := dbError(err).(*apierr.Error)
			if !ok || ae.Status != tc.status || (tc.message != "" && ae.Message != tc.message) {
				t.Errorf("%s: %v -> %#v", tc.name, err, dbError(err))
			}
		}
	})
}
