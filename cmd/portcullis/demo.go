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
		base := "http://" + a.String() + "/api/v2"
		fmt.Printf(`
Portcullis demo (data in %s, deleted on exit)

  admin e-mail:    %s
  admin password:  %s
  admin API key:   %s
  demo API key:    %s   (app "demo": every verb on the sample database "db")

API docs (paste a key, pick a service, try a call): http://%s/api/docs/
Files service "files":     %s/storage (GET /api/v2/files/ with the admin key and a session)
E-mail service "email":    writes each message as an .eml file in %s/storage/email

Try:

  curl -s -H "X-Platform-API-Key: %s" '%s/db/_table/customer?fields=id,name,city&limit=3'
  curl -s -H "X-Platform-API-Key: %s" '%s/db/_table/orders?filter=status%%3D%%27shipped%%27&related=customer_by_customer_id'
  curl -s -X POST -H "X-Platform-API-Key: %s" -H 'Content-Type: application/json' -d '{"email":"%s","password":"%s"}' '%s/system/admin/session'

`, dir, email, password, res.AdminAPIKey, key, a.String(), dir, dir, key, base, key, base, res.AdminAPIKey, email, password, base)
	})
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
