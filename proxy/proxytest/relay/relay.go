// Package relay is a TCP relay for tests: it stands between a client and
// a real server so a test can take the server "down" (Stop closes the
// listener and every connection) and bring it back (Start listens again
// on the same address), to check that a backend answers 503 meanwhile and
// recovers by itself.
package relay

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// Relay forwards TCP connections to a target address.
type Relay struct {
	t      testing.TB
	target string

	mu    sync.Mutex
	addr  string
	ln    net.Listener
	conns []net.Conn
}

// New starts a relay to target on a free loopback port; it stops when the
// test ends.
func New(t testing.TB, target string) *Relay {
	r := &Relay{t: t, target: target}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// Addr is the relay's host:port.
func (r *Relay) Addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

// Start listens (again) on the relay's address.
func (r *Relay) Start() {
	r.mu.Lock()
	addr := r.addr
	r.mu.Unlock()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatalf("relay: %v", err)
	}
	r.mu.Lock()
	r.ln, r.addr = ln, ln.Addr().String()
	r.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", r.target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, up)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// Stop closes the listener and every relayed connection.
func (r *Relay) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}
