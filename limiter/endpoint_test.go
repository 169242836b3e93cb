package limiter

import (
	"strings"
	"testing"
)

func TestBucket(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"root slash", "/", ""},
		{"plain table", "_table/contact", "_table/contact"},
		{"numeric id", "_table/contact/17", "_table/contact/:id"},
		{"leading and trailing slash", "/_table/contact/17/", "_table/contact/:id"},
		{"doubled slashes", "_table//contact///17", "_table/contact/:id"},
		{"upper case", "_TABLE/Contact", "_table/contact"},
		{"zero padded id", "_table/contact/007", "_table/contact/:id"},
		{"long number", "_table/t/123456789012345678901234567890", "_table/t/:id"},
		{"uuid lower", "_table/t/123e4567-e89b-12d3-a456-426614174000", "_table/t/:uuid"},
		{"uuid upper", "_table/t/123E4567-E89B-12D3-A456-426614174000", "_table/t/:uuid"},
		{"uuid without dashes is a hash", "_table/t/123e4567e89b12d3a456426614174000", "_table/t/:hash"},
		{"uuid with bad dash position", "_table/t/123e4567e-89b-12d3-a456-426614174000", "_table/t/123e4567e-89b-12d3-a456-426614174000"},
		{"sha1", "files/da39a3ee5e6b4b0d3255bfef95601890afd80709", "files/:hash"},
		{"objectid 24 hex", "_table/t/507f1f77bcf86cd799439011", "_table/t/:hash"},
		{"16 hex is a hash", "x/0123456789abcdef", "x/:hash"},
		{"15 hex is not", "x/0123456789abcde", "x/0123456789abcde"},
		{"hex letters only 16", "x/abcdefabcdefabcd", "x/:hash"},
		{"upper hex hash", "x/DEADBEEFDEADBEEF", "x/:hash"},
		{"short hex word kept", "x/facade", "x/facade"},
		{"several variables", "a/1/b/123e4567-e89b-12d3-a456-426614174000/c/ffffffffffffffff", "a/:id/b/:uuid/c/:hash"},
		{"dot segments", "./_table/./contact", "_table/contact"},
		{"dot dot", "_table/secret/../contact/5", "_table/contact/:id"},
		{"dot dot above root", "../../_table", "_table"},
		{"dot dot to empty", "_table/..", ""},
		{"non ascii kept", "_table/Ünïcode", "_table/Ünïcode"},
		{"mixed segment kept", "_table/v1.2", "_table/v1.2"},
		{"negative number kept", "x/-5", "x/-5"},
		{"placeholders stay", "_table/contact/:id", "_table/contact/:id"},
		{"star kept literally", "_table/*", "_table/*"},
		{"triple dot is a name", "a/.../b", "a/.../b"},
		{"blanks around segments", " _table / contact /17 ", "_table/contact/:id"},
		{"blank segment dropped", "_table/ /contact/\t/", "_table/contact"},
		{"inner blank kept", "_table/my table", "_table/my table"},
		{"blank dot segment", "_table/ .. /x", "x"},
		{"long path beyond stack buffer", strings.Repeat("segment/", 40) + "42", strings.Repeat("segment/", 40) + ":id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Bucket(tt.in); got != tt.want {
				t.Errorf("Bucket(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeEndpoint(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{name: "exact", in: "_table/contact", want: "_table/contact"},
		{name: "exact bucketed", in: "/_table/Contact/17/", want: "_table/contact/:id"},
		{name: "placeholder", in: "_table/contact/:id", want: "_table/contact/:id"},
		{name: "dir wildcard", in: "_table/*", want: "_table/*"},
		{name: "dir wildcard with slashes", in: "/_table//*", want: "_table/*"},
		{name: "dir wildcard bucketed", in: "_table/contact/5/*", want: "_table/contact/:id/*"},
		{name: "lone star", in: "*", want: "*"},
		{name: "slash star", in: "/*", want: "*"},
		{name: "partial segment", in: "_table/Cont*", want: "_table/cont*"},
		{name: "partial first segment", in: "_tab*", want: "_tab*"},
		{name: "blanks trimmed", in: "  _table/contact  ", want: "_table/contact"},
		{name: "blanks in segments trimmed", in: "_table / Contact / 5 ", want: "_table/contact/:id"},
		{name: "blank partial segment", in: "_table/ Con*", want: "_table/con*"},
		{name: "blank before dir star", in: "_table/ *", want: "_table/*"},
		{name: "tab refused", in: "_table/\tx", err: "endpoint must not contain control characters."},
		{name: "empty", in: "", err: "endpoint must be specified with this limit type."},
		{name: "only slashes", in: "///", err: "endpoint must be specified with this limit type."},
		{name: "only dots", in: "./..", err: "endpoint must be specified with this limit type."},
		{name: "star in middle", in: "_table/*/x", err: `endpoint may contain "*" only as its last character.`},
		{name: "two stars", in: "_table/**", err: `endpoint may contain "*" only as its last character.`},
		{name: "query", in: "_table/contact?filter=x", err: `endpoint must be a resource path, without "?" or "#".`},
		{name: "fragment", in: "_table/contact#x", err: `endpoint must be a resource path, without "?" or "#".`},
		{name: "control char", in: "_table/con\x00tact", err: "endpoint must not contain control characters."},
		{name: "newline", in: "_table/contact\nx", err: "endpoint must not contain control characters."},
		{name: "too long", in: strings.Repeat("a", 1025), err: "endpoint is too long (at most 1024 bytes)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NormalizeEndpoint(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("NormalizeEndpoint(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeEndpoint(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("NormalizeEndpoint(%q) = %q, want %q", tt.in, got, tt.want)
			}
			again, err := NormalizeEndpoint(got)
			if err != nil || again != got {
				t.Errorf("NormalizeEndpoint(%q) = %q, %v; want it unchanged", got, again, err)
			}
		})
	}
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		pattern, endpoint string
		want              bool
	}{
		{"_table/contact", "_table/contact", true},
		{"_table/contact", "/_table/contact/", true},
		{"_table/contact", "_TABLE/CONTACT", true},
		{"_table/contact", "_table/contact/5", false},
		{"_table/contact", "_table/contacts", false},
		{"_table/contact", "_table", false},
		{"_table/contact/17", "_table/contact/99", true},
		{"_table/contact/:id", "_table/contact/99", true},
		{"_table/contact/:id", "_table/contact/abc", false},
		{"_table/contact/:uuid", "_table/contact/123e4567-e89b-12d3-a456-426614174000", true},
		{"_table/contact/:uuid", "_table/contact/17", false},
		{"_table/contact/:hash", "_table/contact/507f1f77bcf86cd799439011", true},
		{"_table/*", "_table", true},
		{"_table/*", "_table/", true},
		{"_table/*", "_table/contact", true},
		{"_table/*", "_table/contact/5", true},
		{"_table/*", "_tables", false},
		{"_table/*", "_proc/x", false},
		{"_table/contact/:id/*", "_table/contact/5/related", true},
		{"_table/contact/:id/*", "_table/contact/5", true},
		{"_table/contact/:id/*", "_table/contact", false},
		{"*", "", true},
		{"*", "anything/at/all", true},
		{"_table/cont*", "_table/contact", true},
		{"_table/cont*", "_table/contacts/5", true},
		{"_table/cont*", "_table/con", false},
		{"_table/cont*", "_table/account", false},
		{"_tab*", "_table/contact", true},
		{"_table/contact", "_table/secret/../contact", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.endpoint, func(t *testing.T) {
			p, err := compilePattern(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.match(appendBucket(nil, tt.endpoint)); got != tt.want {
				t.Errorf("pattern %q match %q = %v, want %v", tt.pattern, tt.endpoint, got, tt.want)
			}
		})
	}
}

func FuzzBucket(f *testing.F) {
	for _, s := range []string{
		"", "/", "_table/contact/17", "/_TABLE//Contact/17/", "../a/./b/..",
		"x/123e4567-e89b-12d3-a456-426614174000", "x/0123456789abcdef0",
		"x/Ünïcode/\xff", "a/:id/*", "_table/cont*", strings.Repeat("a/", 100),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		b := Bucket(in)
		if again := Bucket(b); again != b {
			t.Fatalf("not idempotent: Bucket(%q) = %q, Bucket(that) = %q", in, b, again)
		}
		if strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") || strings.Contains(b, "//") {
			t.Fatalf("Bucket(%q) = %q has stray slashes", in, b)
		}
		for _, seg := range strings.Split(b, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("Bucket(%q) = %q keeps a dot segment", in, b)
			}
		}
		if strings.ToLower(b) != b && strings.ContainsAny(b, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			t.Fatalf("Bucket(%q) = %q keeps upper-case ASCII", in, b)
		}
		// A pattern made from the endpoint (when valid) matches it, and its
		// canonical form is stable.
		p, err := compilePattern(in)
		if err != nil {
			return
		}
		if !p.wildcard && !p.match([]byte(b)) {
			t.Fatalf("pattern %q does not match its own endpoint %q", in, b)
		}
		canon, err := NormalizeEndpoint(p.canonical)
		if err != nil || canon != p.canonical {
			t.Fatalf("NormalizeEndpoint(%q) = %q, %v; want it unchanged", p.canonical, canon, err)
		}
	})
}

func BenchmarkBucket(b *testing.B) {
	for _, in := range []string{
		"_table/contact",
		"_table/contact/17",
		"/files/da39a3ee5e6b4b0d3255bfef95601890afd80709/",
	} {
		b.Run(in, func(b *testing.B) {
			var buf [128]byte
			b.ReportAllocs()
			for b.Loop() {
				_ = appendBucket(buf[:0], in)
			}
		})
	}
	b.Run("string", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Bucket("_table/contact/17")
		}
	})
}
