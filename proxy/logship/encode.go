package logship

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"gopkg.in/Graylog2/go-gelf.v2/gelf"
)

// Encoder writes GELF messages as JSON. Unlike go-gelf's MarshalJSONBuf,
// it always writes the level: go-gelf drops a level of 0 (omitempty), and
// a GELF input reads a message without a level as ALERT (1), so that
// EMERGENCY events arrived one level too low. An Encoder keeps its
// scratch buffers between messages; it is for one goroutine at a time
// (a Transport's Send), and its zero value is ready to use.
type Encoder struct {
	extra bytes.Buffer
	enc   *json.Encoder
}

// Encode appends m as one JSON object to buf.
func (e *Encoder) Encode(buf *bytes.Buffer, m *gelf.Message) error {
	buf.WriteString(`{"version":`)
	appendString(buf, m.Version)
	buf.WriteString(`,"host":`)
	appendString(buf, m.Host)
	buf.WriteString(`,"short_message":`)
	appendString(buf, m.Short)
	if m.Full != "" {
		buf.WriteString(`,"full_message":`)
		appendString(buf, m.Full)
	}
	buf.WriteString(`,"timestamp":`)
	var num [32]byte
	buf.Write(strconv.AppendFloat(num[:0], m.TimeUnix, 'f', -1, 64))
	buf.WriteString(`,"level":`)
	buf.Write(strconv.AppendInt(num[:0], int64(m.Level), 10))
	if m.Facility != "" {
		buf.WriteString(`,"facility":`)
		appendString(buf, m.Facility)
	}
	if len(m.Extra) > 0 {
		if e.enc == nil {
			e.enc = json.NewEncoder(&e.extra)
			e.enc.SetEscapeHTML(false)
		}
		e.extra.Reset()
		if err := e.enc.Encode(m.Extra); err != nil {
			return fmt.Errorf("logship: encode: %w", err)
		}
		// {"_a":1,"_b":2}\n → ,"_a":1,"_b":2
		if b := bytes.TrimSpace(e.extra.Bytes()); len(b) > 2 {
			buf.WriteByte(',')
			buf.Write(b[1 : len(b)-1])
		}
	}
	if raw := bytes.TrimSpace(m.RawExtra); len(raw) > 2 {
		buf.WriteByte(',')
		buf.Write(raw[1 : len(raw)-1])
	}
	buf.WriteByte('}')
	return nil
}

// MarshalMessage returns m as GELF JSON, with its level always written
// (see Encoder).
func MarshalMessage(m *gelf.Message) ([]byte, error) {
	var e Encoder
	var buf bytes.Buffer
	if err := e.Encode(&buf, m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// Compressors are pooled: a flate compressor holds about 1 MB of tables,
// and making one per message cost more than everything else a message
// needs (go-gelf's UDP writer makes one per message).
var (
	gzipPool = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, flate.BestSpeed)
		return w
	}}
	zlibPool = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(io.Discard, flate.BestSpeed)
		return w
	}}
)

// compress appends data compressed with kind (gzip or zlib) to dst.
func compress(dst *bytes.Buffer, kind string, data []byte) error {
	var zw interface {
		io.WriteCloser
		Reset(io.Writer)
	}
	var pool *sync.Pool
	switch kind {
	case "gzip":
		pool = &gzipPool
	case "zlib":
		pool = &zlibPool
	default:
		dst.Write(data)
		return nil
	}
	zw = pool.Get().(interface {
		io.WriteCloser
		Reset(io.Writer)
	})
	defer pool.Put(zw)
	zw.Reset(dst)
	if _, err := zw.Write(data); err != nil {
		return fmt.Errorf("logship: %s: %w", kind, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("logship: %s: %w", kind, err)
	}
	return nil
}
