package caller

import "testing"

func TestPercentDecodeLenient(t *testing.T) {
	tests := []struct{ in, form, raw string }{
		{"%41%2", "A%2", "A%2"},
		{"100%", "100%", "100%"},
		{"a+b%zz", "a b%zz", "a+b%zz"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := percentDecode(tt.in, true); got != tt.form {
				t.Errorf("urldecode = %q, want %q", got, tt.form)
			}
			if got := percentDecode(tt.in, false); got != tt.raw {
				t.Errorf("rawurldecode = %q, want %q", got, tt.raw)
			}
		})
	}
}

func TestExpandLookups(t *testing.T) {
	values := map[string]string{"region": "eu west", "user.id": "7", "secret": "s3"}
	tests := []struct {
		name, in, want string
		changed        bool
	}{
		{"no braces", "return 1", "return 1", false},
		{"language braces", "var o = {a: 1}; if (x) {y()}", "var o = {a: 1}; if (x) {y()}", false},
		{"known", "var r = '{region}';", "var r = 'eu west';", true},
		{"unknown stays", "var u = {unknown}; var id = {user.id};", "var u = {unknown}; var id = 7;", true},
		{"modifier", "{urlencode(region)}/{strtoupper(secret)}", "eu+west/S3", true},
		{"bad modifier stays", "{system(region)} {region}", "{system(region)} eu west", true},
		{"failing modifier stays", "{base64_decode(region)}", "{base64_decode(region)}", false},
		{"one pass", "{region}", "eu west", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := ExpandLookups(tt.in, values)
			if got != tt.want || changed != tt.changed {
				t.Errorf("ExpandLookups(%q) = %q, %v; want %q, %v", tt.in, got, changed, tt.want, tt.changed)
			}
		})
	}
	// A value that looks like a token is not expanded again.
	if got, _ := ExpandLookups("{a}", map[string]string{"a": "{b}", "b": "x"}); got != "{b}" {
		t.Errorf("second pass: %q", got)
	}
}
