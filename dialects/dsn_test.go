package dialects

import "testing"

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:p@h:5432/d?sslmode=disable", "postgres://u:***@h:5432/d?sslmode=disable"},
		{"postgres://u@h/d", "postgres://u@h/d"},
		{"mysql://u:p@tcp(h:3306)/d", "mysql://u:***@tcp(h:3306)/d"},
		{"u:p@tcp(h:3306)/d", "u:***@tcp(h:3306)/d"},
		{"mysql://u@tcp(h:3306)/d", "mysql://u@tcp(h:3306)/d"},
		{"sqlite:///tmp/a.db", "sqlite:///tmp/a.db"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
