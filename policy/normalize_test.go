package policy

import (
	"strings"
	"testing"
)

func TestNormalizeComponent(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"/", ""},
		{"_table/contact", "_table/contact"},
		{"/_table/contact/", "_table/contact"},
		{"_table//contact", "_table/contact"},
		{"_Table/Contact", "_table/contact"},
		{"_table/./contact", "_table/contact"},
		{"_table/x/../contact", "_table/contact"},
		{"../../_table", "_table"},
		{"..", ""},
		{"_table/contact(id,name)", "_table/contact"},
		{"_table/contact(id)/5", "_table/contact/5"},
		{"_table/a)b(c", "_table/a)b(c"},
		{"_table/public.contact", "_table/public.contact"},
		{"_table/.hidden", "_table/.hidden"},
		{"_table/...", "_table/..."},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := NormalizeComponent(tt.in); got != tt.want {
				t.Errorf("NormalizeComponent(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeComponentAllocations(t *testing.T) {
	for _, c := range []string{"_table/contact/5", "_table/public.contact", ""} {
		if n := testing.AllocsPerRun(100, func() { NormalizeComponent(c) }); n != 0 {
			t.Errorf("NormalizeComponent(%q) allocates %v times", c, n)
		}
	}
}

func TestVerbBit(t *testing.T) {
	tests := []struct {
		verb string
		want int
	}{
		{"GET", VerbGet}, {"get", VerbGet}, {"READ", VerbGet},
		{"POST", VerbPost}, {"create", VerbPost},
		{"PUT", VerbPut}, {"UPDATE", VerbPut},
		{"PATCH", VerbPatch}, {"DELETE", VerbDelete},
		{"OPTIONS", VerbOptions}, {"HEAD", VerbHead}, {"COPY", VerbCopy},
		{"TRACE", VerbTrace}, {"CONNECT", VerbConnect},
		{"MERGE", 0}, {"", 0}, {"G ET", 0},
	}
	for _, tt := range tests {
		t.Run(tt.verb, func(t *testing.T) {
			if got := VerbBit(tt.verb); got != tt.want {
				t.Errorf("VerbBit(%q) = %d, want %d", tt.verb, got, tt.want)
			}
			if tt.want != 0 && VerbBit(verbName(tt.want)) != tt.want {
				t.Errorf("verbName(%d) = %q does not map back", tt.want, verbName(tt.want))
			}
		})
	}
}

func FuzzNormalizeComponent(f *testing.F) {
	for _, s := range []string{"_table/contact", "/a//b/", "a/./b/../c", "x(y)z", "..", "A/B", "a/.../b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := NormalizeComponent(s)
		if got == "" {
			return
		}
		if strings.HasPrefix(got, "/") || strings.HasSuffix(got, "/") {
			t.Fatalf("%q -> %q: leading or trailing slash", s, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("%q -> %q: segment %q left", s, got, seg)
			}
		}
		if got != strings.ToLower(got) {
			t.Fatalf("%q -> %q: not lower case", s, got)
		}
	})
}
