package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDemoBanner checks the lines demo prints to paste into a shell: the
// keys as exported variables, and a sign-in whose token the sed
// expression takes out of a session response.
func TestDemoBanner(t *testing.T) {
	b := demoBanner(demoInfo{dir: "/tmp/d", addr: "127.0.0.1:8080", email: "admin@example.com", password: "pw-123456",
		adminKey: "aaaa", demoKey: "bbbb"})
	for _, want := range []string{
		"export BASE=http://127.0.0.1:8080/api/v2\n", "export K=bbbb\n", "export ADMIN_KEY=aaaa\n",
		`export TOKEN=$(curl -s -X POST -H "X-Platform-API-Key: $ADMIN_KEY"`,
		`-d '{"email":"admin@example.com","password":"pw-123456"}' "$BASE/system/admin/session"`,
		`-H "X-Platform-Session-Token: $TOKEN"`,
	} {
		if !strings.Contains(b, want) {
			t.Errorf("banner lacks %q:\n%s", want, b)
		}
	}
	// The sed of the TOKEN line, on a session response.
	line := b[strings.Index(b, "export TOKEN="):]
	line = line[:strings.Index(line, "\n")]
	sed := line[strings.Index(line, "sed -n '")+len("sed -n '") : strings.LastIndex(line, "'")]
	cmd := exec.Command("sed", "-n", sed)
	cmd.Stdin = strings.NewReader(`{"session_token":"eyJ.abc.def","session_id":"eyJ.abc.def","id":1,"name":"Admin"}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("no sed here: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != "eyJ.abc.def" {
		t.Errorf("sed took %q out of the session response", got)
	}
}
