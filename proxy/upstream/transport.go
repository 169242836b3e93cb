package upstream

import (
	"net"
	"net/http"
	"time"
)

// Timeouts used by Dialer and Transport.
const (
	DialTimeout     = 10 * time.Second
	TLSTimeout      = 10 * time.Second
	IdleConnTimeout = 90 * time.Second
)

// Dialer returns the dial function for a with the platform's dial timeout
// and keep-alive, for clients that take a DialContext (SFTP, SMTP, brokers).
func (a AllowList) Dialer() DialFunc {
	return a.Dial(&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}, nil)
}

// Transport returns a new HTTP transport that dials through a, with the
// platform's dial, TLS and idle timeouts and HTTP/2 where the server offers
// it. Environment proxies (HTTP_PROXY and the like) are used only when a
// is empty: with an allow list the transport must see the real
// destination. Callers may adjust the returned transport before first use.
func (a AllowList) Transport() *http.Transport {
	tr := &http.Transport{
		DialContext:           a.Dialer(),
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   TLSTimeout,
		IdleConnTimeout:       IdleConnTimeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		ExpectContinueTimeout: time.Second,
	}
	if a.Empty() {
		tr.Proxy = http.ProxyFromEnvironment
	}
	return tr
}
