package limiter

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImports checks that the package imports nothing of Portcullis (the
// architecture allows only its libraries and the standard library).
func TestImports(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not in PATH: skipping the import check")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/portcullis-dev/portcullis/limiter"
	for _, p := range strings.Fields(string(out)) {
		if p != self && strings.HasPrefix(p, "github.com/portcullis-dev/portcullis") {
			t.Errorf("limiter imports %s", p)
		}
	}
}
