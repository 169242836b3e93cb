package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// AllowList is a parsed UpstreamAllow: networks and host-name patterns.
// The zero AllowList allows everything.
type AllowList struct {
	nets  []netip.Prefix
	hosts []string // lower case; "*.example.com" matches below example.com
}

// Empty reports whether the list allows everything (no entries).
func (a AllowList) Empty() bool { return len(a.nets) == 0 && len(a.hosts) == 0 }

// ParseAllowList reads entries: a CIDR ("10.0.0.0/8"), an IP address
// ("127.0.0.1", "::1"), a host name ("api.example.com") or a wildcard
// ("*.example.com"). It reports every bad entry at once.
func ParseAllowList(entries []string) (AllowList, error) {
	var a AllowList
	var errs []error
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			a.nets = append(a.nets, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			ip = ip.Unmap().WithZone("")
			a.nets = append(a.nets, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		host := strings.ToLower(strings.TrimSuffix(e, "."))
		if !validHostPattern(host) {
			errs = append(errs, fmt.Errorf("upstream allow entry %q is not a CIDR, an IP address or a host name", e))
			continue
		}
		a.hosts = append(a.hosts, host)
	}
	return a, errors.Join(errs...)
}

func validHostPattern(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// HostAllowed reports whether a host name matches a host entry.
func (a AllowList) HostAllowed(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range a.hosts {
		if suffix, ok := strings.CutPrefix(h, "*"); ok {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
			continue
		}
		if host == h {
			return true
		}
	}
	return false
}

// IPAllowed reports whether ip is inside a network entry.
func (a AllowList) IPAllowed(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, p := range a.nets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// NotAllowedError is returned when the upstream allow list forbids the
// address a service points at. The proxy answers it with 502.
type NotAllowedError struct {
	// Host is the host that was dialled; Addrs what it resolved to.
	Host  string
	Addrs []netip.Addr
}

// Error describes the refusal.
func (e *NotAllowedError) Error() string {
	if len(e.Addrs) == 0 {
		return fmt.Sprintf("upstream %s is not in the upstream allow list", e.Host)
	}
	return fmt.Sprintf("upstream %s (%v) is not in the upstream allow list", e.Host, e.Addrs)
}

// Resolver is what the guarded dialer needs of a DNS resolver.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc is the shape of net.Dialer.DialContext and http.Transport's
// DialContext field.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dial returns a DialContext that enforces a on the address it
// actually connects to. A host named by a host entry is dialled as usual
// (its DNS is trusted); any other host is resolved here, once, and only
// its allowed addresses are dialled, so a DNS answer that changes between
// a check and the connection (DNS rebinding) cannot reach a forbidden
// address.
// A nil res means net.DefaultResolver.
func (a AllowList) Dial(d *net.Dialer, res Resolver) DialFunc {
	if res == nil {
		res = net.DefaultResolver
	}
	if a.Empty() {
		return d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if a.HostAllowed(host) {
			return d.DialContext(ctx, network, addr)
		}
		var ips []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			ips = []netip.Addr{ip}
		} else {
			ips, err = res.LookupNetIP(ctx, ipNetwork(network), host)
			if err != nil {
				return nil, err
			}
		}
		var allowed []netip.Addr
		for _, ip := range ips {
			if a.IPAllowed(ip) {
				allowed = append(allowed, ip)
			}
		}
		if len(allowed) == 0 {
			return nil, &NotAllowedError{Host: host, Addrs: ips}
		}
		var first error
		for _, ip := range allowed {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			if first == nil {
				first = err
			}
			if ctx.Err() != nil {
				break
			}
		}
		return nil, first
	}
}

func ipNetwork(network string) string {
	switch network {
	case "tcp4", "udp4":
		return "ip4"
	case "tcp6", "udp6":
		return "ip6"
	}
	return "ip"
}
