package files_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/net/webdav"

	"github.com/portcullis-dev/portcullis/proxy/files"
)

// kinds are the storages every handler test runs on, each serving the same
// local folder: directly, through an in-process SSH/SFTP server, and
// through an in-process WebDAV server.
var kinds = []string{"local", "sftp", "webdav"}

// storageFor returns a storage of kind over the folder root.
func storageFor(t *testing.T, kind, root string) files.Storage {
	t.Helper()
	switch kind {
	case "sftp":
		cfg, _ := startSFTP(t, root)
		return files.NewSFTP(cfg, nil, nil)
	case "webdav":
		return files.NewWebDAV(startWebDAV(t, root), nil)
	}
	return files.NewLocal(root)
}

// sshServer is an in-process SSH server with the sftp subsystem.
type sshServer struct {
	cfg   *ssh.ServerConfig
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]bool
}

// serve accepts connections on ln until it is closed.
func (s *sshServer) serve(ln net.Listener) {
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[conn] = true
			s.mu.Unlock()
			go serveSSH(conn, s.cfg)
		}
	}()
}

// stop closes the listener and every connection.
func (s *sshServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.conns = map[net.Conn]bool{}
}

// startSFTP serves the machine's file system over SSH on a loopback port
// (user "u", password "p") and returns a config rooted at root, with the
// host key pinned, and the server.
func startSFTP(t *testing.T, root string) (files.SFTPConfig, *sshServer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{PasswordCallback: func(c ssh.ConnMetadata, pass []byte) (*ssh.Permissions, error) {
		if c.User() == "u" && string(pass) == "p" {
			return nil, nil
		}
		return nil, errors.New("denied")
	}}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &sshServer{cfg: cfg, conns: map[net.Conn]bool{}}
	srv.serve(ln)
	t.Cleanup(srv.stop)
	return files.SFTPConfig{Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port, Username: "u", Password: "p",
		HostFingerprint: ssh.FingerprintSHA256(signer.PublicKey()), Container: root, Timeout: 5}, srv
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig) {
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		conn.Close()
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only sessions")
			continue
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		go func() {
			defer ch.Close()
			for req := range creqs {
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				_ = req.Reply(ok, nil)
				if ok {
					srv, err := sftp.NewServer(ch)
					if err != nil {
						return
					}
					_ = srv.Serve()
					srv.Close()
					return
				}
			}
		}()
	}
}

// startWebDAV serves root over WebDAV (basic auth "u"/"p") and returns a
// config for it.
func startWebDAV(t *testing.T, root string) files.WebDAVConfig {
	t.Helper()
	dav := &webdav.Handler{FileSystem: webdav.Dir(root), LockSystem: webdav.NewMemLS()}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "u" || p != "p" {
			w.Header().Set("WWW-Authenticate", `Basic realm="dav"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		dav.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return files.WebDAVConfig{BaseURI: srv.URL, Username: "u", Password: "p", Timeout: 5}
}
