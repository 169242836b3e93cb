package filter

import (
	"go/build"
	"strings"
	"testing"
)

// TestImports keeps the package a leaf: the standard library and bun only,
// never the dialects or sqldb packages (doc.go).
func TestImports(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if !strings.Contains(first, ".") {
			continue // standard library
		}
		if imp != "github.com/uptrace/bun" && imp != "github.com/uptrace/bun/schema" {
			t.Errorf("forbidden import %q", imp)
		}
	}
}
