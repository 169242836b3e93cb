package logship

import (
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"gopkg.in/Graylog2/go-gelf.v2/gelf"
)

// DialFunc opens a connection, like net.Dialer.DialContext.
type DialFunc = func(ctx context.Context, network, address string) (net.Conn, error)

// ErrBackoff is returned by a transport that waits before dialling a
// collector again.
var ErrBackoff = errors.New("logship: collector unreachable; waiting before the next attempt")

// Dial returns the transport of cfg's protocol (gelf, udp or tcp); it
// connects on the first Send, from the connector's goroutine. dial may be
// nil.
func Dial(cfg Config, dial DialFunc) (Transport, error) {
	cfg, err := cfg.Normal()
	if err != nil {
		return nil, err
	}
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	switch cfg.Protocol {
	case ProtocolGELF:
		ct := gelf.CompressGzip
		switch cfg.Compression {
		case "zlib":
			ct = gelf.CompressZlib
		case "none":
			ct = gelf.CompressNone
		}
		return &udpTransport{addr: addr, dial: dial, timeout: cfg.Timeout, compression: ct}, nil
	case ProtocolUDP:
		return &udpTransport{addr: addr, dial: dial, timeout: cfg.Timeout, compression: gelf.CompressNone}, nil
	case ProtocolTCP:
		return &tcpTransport{addr: addr, dial: dial, timeout: cfg.Timeout}, nil
	}
	return nil, fmt.Errorf("logship: protocol %q needs a Transport from its caller", cfg.Protocol)
}

// backoff spaces out dial attempts to a collector that cannot be reached:
// 1 s, doubling to 30 s, reset by a success.
type backoff struct {
	next  time.Time
	delay time.Duration
}

func (b *backoff) wait() bool { return time.Now().Before(b.next) }

func (b *backoff) failed() {
	b.delay = min(max(2*b.delay, time.Second), 30*time.Second)
	b.next = time.Now().Add(b.delay)
}

func (b *backoff) ok() { b.delay, b.next = 0, time.Time{} }

// udpTransport is GELF over UDP with go-gelf's writer: compressed (or
// not), split in GELF chunks of 1420 bytes when longer, at most 128.
type udpTransport struct {
	addr        string
	dial        DialFunc
	timeout     time.Duration
	compression gelf.CompressType
	w           *gelf.UDPWriter
	backoff
}

func (t *udpTransport) Send(m *gelf.Message) error {
	if t.w == nil {
		if t.wait() {
			return ErrBackoff
		}
		// Dial once through dial (allow list, resolution), then hand the
		// resolved address to go-gelf's writer, which dials it itself.
		ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
		c, err := t.dial(ctx, "udp", t.addr)
		cancel()
		if err != nil {
			t.failed()
			return fmt.Errorf("logship: %w", err)
		}
		remote := c.RemoteAddr().String()
		_ = c.Close()
		w, err := gelf.NewUDPWriter(remote)
		if err != nil {
			t.failed()
			return fmt.Errorf("logship: %w", err)
		}
		w.CompressionType = t.compression
		w.CompressionLevel = flate.BestSpeed
		t.w = w
		t.ok()
	}
	if err := t.w.WriteMessage(m); err != nil {
		return fmt.Errorf("logship: udp: %w", err)
	}
	return nil
}

func (t *udpTransport) Close() error {
	if t.w == nil {
		return nil
	}
	return t.w.Close()
}

// tcpTransport is GELF over TCP: each message is its JSON followed by a
// NUL byte, uncompressed, on one connection that is dialled again after
// an error.
type tcpTransport struct {
	addr    string
	dial    DialFunc
	timeout time.Duration
	conn    net.Conn
	buf     bytes.Buffer
	backoff
}

func (t *tcpTransport) Send(m *gelf.Message) error {
	t.buf.Reset()
	if err := m.MarshalJSONBuf(&t.buf); err != nil {
		return fmt.Errorf("logship: encode: %w", err)
	}
	t.buf.WriteByte(0)
	if t.conn == nil {
		if t.wait() {
			return ErrBackoff
		}
		ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
		c, err := t.dial(ctx, "tcp", t.addr)
		cancel()
		if err != nil {
			t.failed()
			return fmt.Errorf("logship: %w", err)
		}
		t.conn = c
		t.ok()
	}
	_ = t.conn.SetWriteDeadline(time.Now().Add(t.timeout))
	if _, err := t.conn.Write(t.buf.Bytes()); err != nil {
		_ = t.conn.Close()
		t.conn = nil
		return fmt.Errorf("logship: tcp: %w", err)
	}
	return nil
}

func (t *tcpTransport) Close() error {
	if t.conn == nil {
		return nil
	}
	return t.conn.Close()
}
