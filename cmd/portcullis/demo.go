package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/portcullis-dev/portcullis/proxy"
	"github.com/portcullis-dev/portcullis/proxy/store"
)

type demoCmd struct {
	Addr string `help:"Address to listen on." default:"127.0.0.1:8080"`
	Keep bool   `help:"Keep the temporary data directory on exit."`
}

func (c demoCmd) Run(g *globals) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "portcullis-demo-")
	if err != nil {
		return err
	}
	if !c.Keep {
		defer os.RemoveAll(dir)
	}
	cfg := proxy.Config{DataDir: dir, PublicURL: publicURL("", c.Addr), Logger: g.logger()}
	email, password := "admin@portcullis.local", store.NewSecret(9)
	res, err := proxy.Init(ctx, cfg, store.InitOptions{Email: email, Password: password, Name: "Demo Admin"})
	if err != nil {
		return err
	}
	key, err := proxy.SeedDemo(ctx, cfg)
	if err != nil {
		return err
	}
	if err := seedDemoFiles(dir); err != nil {
		return err
	}
	return serve(ctx, cfg, c.Addr, shutdown{wait: 10 * time.Second}, func(a net.Addr) {
		fmt.Print(demoBanner(demoInfo{dir: dir, addr: a.String(), email: email, password: password,
			adminKey: res.AdminAPIKey, demoKey: key}))
	})
}

// demoInfo is what the demo banner shows.
type demoInfo struct {
	dir, addr, email, password, adminKey, demoKey string
}

// demoBanner is what demo prints once it listens: the credentials, then
// lines to paste into a POSIX shell: the keys as variables, a sign-in
// whose session token lands in $TOKEN (sed only, no jq), and first calls.
func demoBanner(d demoInfo) string {
	login := fmt.Sprintf(`{"email":"%s","password":"%s"}`, d.email, d.password)
	return fmt.Sprintf(`
Portcullis demo (data in %[1]s, deleted on exit)

  admin e-mail:    %[2]s
  admin password:  %[3]s
  admin API key:   %[4]s
  demo API key:    %[5]s   (app "demo": every verb on the sample database "db", and its MCP tools at /api/v2/ai)

API docs (paste a key, pick a service, try a call): http://%[6]s/api/docs/
Files service "files":     %[1]s/storage (GET /api/v2/files/ with the admin key and a session)
E-mail service "email":    writes each message as an .eml file in %[1]s/storage/email

Paste into a shell (another terminal):

  export BASE=http://%[6]s/api/v2
  export K=%[5]s
  export ADMIN_KEY=%[4]s
  export TOKEN=$(curl -s -X POST -H "X-Platform-API-Key: $ADMIN_KEY" -H 'Content-Type: application/json' -d '%[7]s' "$BASE/system/admin/session" | sed -n 's/.*"session_token":"\([^"]*\)".*/\1/p')

Then:

  curl -s -H "X-Platform-API-Key: $K" "$BASE/db/_table/customer?fields=id,name,city&limit=3"
  curl -s -H "X-Platform-API-Key: $K" "$BASE/db/_table/orders?filter=status%%3D%%27shipped%%27&related=customer_by_customer_id"
  curl -s -X POST -H "X-Platform-API-Key: $K" -H 'Content-Type: application/json' -d '{"resource":[{"name":"Slide rule","price":12.5}]}' "$BASE/db/_table/product"
  curl -s -H "X-Platform-API-Key: $ADMIN_KEY" -H "X-Platform-Session-Token: $TOKEN" "$BASE/system/service?fields=name,type"

`, d.dir, d.email, d.password, d.adminKey, d.demoKey, d.addr, login)
}

// seedDemoFiles puts a first file in the files service's root.
func seedDemoFiles(dir string) error {
	root := filepath.Join(dir, "storage")
	if err := os.MkdirAll(filepath.Join(root, "email"), 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	text := "Welcome to Portcullis.\nThis file is served by the files service: GET /api/v2/files/welcome.txt\n"
	if err := os.WriteFile(filepath.Join(root, "welcome.txt"), []byte(text), 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}
