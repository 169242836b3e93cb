package filter

import (
	"strings"
	"testing"
)

const typicalFilter = "(status = 'open') and (priority >= 3 or owner.name like 'A%')"

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(typicalFilter); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		e, err := Parse(typicalFilter)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Compile(e, testSchema); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	e, err := Parse(typicalFilter)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Compile(e, testSchema); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCompileInList is a large filter: an in list of 1000 ids.
func BenchmarkParseCompileInList(b *testing.B) {
	items := make([]string, DefaultMaxListItems)
	for i := range items {
		items[i] = "12345"
	}
	src := "id in (" + strings.Join(items, ", ") + ")"
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := Compile(e, testSchema); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseOrderFields(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFields("id, name, status, priority, owner_id"); err != nil {
			b.Fatal(err)
		}
		if _, err := ParseOrder("priority desc nulls last, id"); err != nil {
			b.Fatal(err)
		}
	}
}
