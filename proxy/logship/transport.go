package logship

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
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
		return &udpTransport{addr: addr, dial: dial, timeout: cfg.Timeout, compression: cfg.Compression}, nil
	case ProtocolUDP:
		return &udpTransport{addr: addr, dial: dial, timeout: cfg.Timeout, compression: "none"}, nil
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

// ChunkSize is the largest datagram sent (GELF chunks included), as
// go-gelf and Graylog's clients use; MaxChunks the most chunks of one
// message, as the GELF specification allows.
const (
	ChunkSize = 1420
	MaxChunks = 128
)

const chunkData = ChunkSize - 12 // 2 magic bytes, 8 of id, sequence, count

// udpTransport is GELF over UDP: each message compressed (gzip or zlib,
// with pooled compressors) or not, split in GELF chunks when longer than
// one datagram. It keeps its buffers between messages.
type udpTransport struct {
	addr        string
	dial        DialFunc
	timeout     time.Duration
	compression string // gzip, zlib or none
	conn        net.Conn
	enc         Encoder
	plain, z    bytes.Buffer
	chunk       [ChunkSize]byte
	id          uint64
	backoff
}

func (t *udpTransport) Send(m *gelf.Message) error {
	if t.conn == nil {
		if t.wait() {
			return ErrBackoff
		}
		// A connected UDP socket, dialled through dial (allow list,
		// resolution).
		ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
		c, err := t.dial(ctx, "udp", t.addr)
		cancel()
		if err != nil {
			t.failed()
			return fmt.Errorf("logship: %w", err)
		}
		t.conn = c
		t.id = rand.Uint64()
		t.ok()
	}
	t.plain.Reset()
	if err := t.enc.Encode(&t.plain, m); err != nil {
		return err
	}
	data := t.plain.Bytes()
	if t.compression != "none" {
		t.z.Reset()
		if err := compress(&t.z, t.compression, data); err != nil {
			return err
		}
		data = t.z.Bytes()
	}
	if err := t.write(data); err != nil {
		return fmt.Errorf("logship: udp: %w", err)
	}
	return nil
}

// write sends data in one datagram, or in GELF chunks.
func (t *udpTransport) write(data []byte) error {
	_ = t.conn.SetWriteDeadline(time.Now().Add(t.timeout))
	if len(data) <= ChunkSize {
		_, err := t.conn.Write(data)
		return err
	}
	n := (len(data) + chunkData - 1) / chunkData
	if n > MaxChunks {
		return fmt.Errorf("message of %d bytes would need %d chunks (at most %d)", len(data), n, MaxChunks)
	}
	t.id++
	c := t.chunk[:]
	c[0], c[1] = 0x1e, 0x0f
	binary.BigEndian.PutUint64(c[2:10], t.id)
	c[11] = byte(n)
	for i := 0; i < n; i++ {
		c[10] = byte(i)
		part := data[i*chunkData : min((i+1)*chunkData, len(data))]
		size := 12 + copy(c[12:], part)
		if _, err := t.conn.Write(c[:size]); err != nil {
			return fmt.Errorf("chunk %d of %d: %w", i+1, n, err)
		}
	}
	return nil
}

func (t *udpTransport) Close() error {
	if t.conn == nil {
		return nil
	}
	return t.conn.Close()
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
	enc     Encoder
	backoff
}

func (t *tcpTransport) Send(m *gelf.Message) error {
	t.buf.Reset()
	if err := t.enc.Encode(&t.buf, m); err != nil {
		return err
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
