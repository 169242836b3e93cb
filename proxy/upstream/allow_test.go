package upstream_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/upstream"
)

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestGuardedDial(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	res := fakeResolver{
		"rebind.example": {netip.MustParseAddr("127.0.0.1")},
		"mixed.example":  {netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("127.0.0.1")},
		"mapped.example": {netip.MustParseAddr("::ffff:127.0.0.1")},
	}
	tests := []struct {
		name    string
		allow   []string
		host    string
		wantErr string // "" for a connection, "allow" for NotAllowedError, "dns"
	}{
		{"empty list allows", nil, "127.0.0.1", ""},
		{"rebinding to loopback refused", []string{"10.0.0.0/8"}, "rebind.example", "allow"},
		{"literal loopback refused", []string{"10.0.0.0/8"}, "127.0.0.1", "allow"},
		{"allowed address dialled", []string{"127.0.0.0/8"}, "rebind.example", ""},
		{"only allowed addresses of a mixed answer", []string{"127.0.0.1/32"}, "mixed.example", ""},
		{"mapped address checked unmapped", []string{"127.0.0.1"}, "mapped.example", ""},
		{"mapped address refused", []string{"10.0.0.0/8"}, "mapped.example", "allow"},
		{"unknown host", []string{"10.0.0.0/8"}, "nosuch.example", "dns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := upstream.ParseAllowList(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			dial := a.Dial(&net.Dialer{Timeout: time.Second}, res)
			c, err := dial(t.Context(), "tcp", net.JoinHostPort(tc.host, port))
			var na *upstream.NotAllowedError
			var de *net.DNSError
			switch tc.wantErr {
			case "":
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				c.Close()
			case "allow":
				if !errors.As(err, &na) {
					t.Fatalf("err = %v, want NotAllowedError", err)
				}
			case "dns":
				if !errors.As(err, &de) {
					t.Fatalf("err = %v, want a DNS error", err)
				}
			}
		})
	}
}

func TestAllowListParsing(t *testing.T) {
	a, err := upstream.ParseAllowList([]string{"10.0.0.0/8", " 192.168.1.7 ", "[::1]", "API.Example.com.", "*.internal.example", ""})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"api.example.com": true, "API.EXAMPLE.COM": true, "x.api.example.com": false,
		"a.internal.example": true, "a.b.internal.example": true, "internal.example": false,
	} {
		if got := a.HostAllowed(host); got != want {
			t.Errorf("hostAllowed(%s) = %v", host, got)
		}
	}
	for ip, want := range map[string]bool{"10.9.9.9": true, "192.168.1.7": true, "192.168.1.8": false, "::1": true, "::ffff:10.0.0.1": true} {
		if got := a.IPAllowed(netip.MustParseAddr(ip)); got != want {
			t.Errorf("ipAllowed(%s) = %v", ip, got)
		}
	}
	if _, err := upstream.ParseAllowList([]string{"-bad-.example", "a b", "10.0.0.0/33"}); err == nil {
		t.Fatal("bad entries accepted")
	}
}
