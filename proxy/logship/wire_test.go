package logship_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"gopkg.in/Graylog2/go-gelf.v2/gelf"

	"github.com/portcullis-dev/portcullis/proxy/logship"
)

// datagram reads one GELF message off a UDP socket as raw bytes: it
// reassembles chunks and decompresses by the magic bytes, without
// go-gelf's reader (which reads an absent level as 0 and so cannot tell
// EMERGENCY from a message without a level).
func datagram(t *testing.T, pc net.PacketConn) []byte {
	t.Helper()
	buf := make([]byte, 65536)
	var whole []byte
	chunks := map[byte][]byte{}
	for {
		_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no datagram: %v", err)
		}
		d := buf[:n]
		if n < 12 || d[0] != 0x1e || d[1] != 0x0f {
			whole = append([]byte(nil), d...)
			break
		}
		chunks[d[10]] = append([]byte(nil), d[12:]...)
		if len(chunks) == int(d[11]) {
			for i := byte(0); i < d[11]; i++ {
				whole = append(whole, chunks[i]...)
			}
			break
		}
	}
	var r io.Reader
	var err error
	switch {
	case bytes.HasPrefix(whole, []byte{0x1f, 0x8b}):
		r, err = gzip.NewReader(bytes.NewReader(whole))
	case whole[0] == 0x78:
		r, err = zlib.NewReader(bytes.NewReader(whole))
	default:
		return whole
	}
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}

// TestEmergencyLevel ships an EMERGENCY message (level 0) over each
// protocol and reads the JSON that arrives: "level":0 must be in it. A
// GELF input reads a message without a level as ALERT (1); go-gelf's
// encoder left level 0 out.
func TestEmergencyLevel(t *testing.T) {
	ev := &logship.Event{Time: time.Unix(1_750_000_000, 0), Path: "/api/v2/log", Method: "POST",
		Message: "disk on fire", Level: logship.Emergency, HasLevel: true}
	for _, tc := range []struct{ protocol, compression string }{
		{"gelf", "gzip"}, {"gelf", "zlib"}, {"gelf", "none"}, {"udp", ""}, {"tcp", ""},
	} {
		t.Run(tc.protocol+"/"+tc.compression, func(t *testing.T) {
			var raw []byte
			if tc.protocol == "tcp" {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				c := start(t, logship.Config{Port: ln.Addr().(*net.TCPAddr).Port, Protocol: "tcp", Level: "EMERGENCY"}, logship.Options{})
				c.Ship(ev)
				conn, err := ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				raw, err = bufio.NewReader(conn).ReadBytes(0)
				if err != nil {
					t.Fatal(err)
				}
				raw = raw[:len(raw)-1]
			} else {
				pc, err := net.ListenPacket("udp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer pc.Close()
				c := start(t, logship.Config{Port: pc.LocalAddr().(*net.UDPAddr).Port, Protocol: tc.protocol,
					Compression: tc.compression, Level: "EMERGENCY"}, logship.Options{})
				c.Ship(ev)
				raw = datagram(t, pc)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("not JSON: %v: %s", err, raw)
			}
			if string(m["level"]) != "0" {
				t.Errorf("level = %q in %s", m["level"], raw)
			}
			if string(m["full_message"]) != `"disk on fire"` || string(m["version"]) != `"1.1"` {
				t.Errorf("message = %s", raw)
			}
		})
	}
}

// TestMarshalMessage checks the encoder against encoding/json: escapes,
// invalid UTF-8, numbers and the additional fields.
func TestMarshalMessage(t *testing.T) {
	for _, m := range []*gelf.Message{
		{Version: "1.1", Host: "h", Short: "s", TimeUnix: 1.5, Level: 0},
		{Version: "1.1", Host: "h\"\\\n\t\x01<>&", Short: "bad \xff utf8 \u2028", Full: "f", TimeUnix: 1750000000.123456, Level: 7,
			Facility: "fac", Extra: map[string]any{"_a": 1, "_b": map[string]any{"c": []any{"x", nil, true}}}},
	} {
		raw, err := logship.MarshalMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("not JSON: %v: %s", err, raw)
		}
		if got["host"] != strings.ToValidUTF8(m.Host, "\ufffd") || got["short_message"] != strings.ToValidUTF8(m.Short, "\ufffd") ||
			got["timestamp"] != m.TimeUnix || got["level"] != float64(m.Level) {
			t.Errorf("%s", raw)
		}
		if _, ok := got["full_message"]; ok != (m.Full != "") {
			t.Errorf("full_message: %s", raw)
		}
		for k, v := range m.Extra {
			want, _ := json.Marshal(v)
			have, _ := json.Marshal(got[k])
			if !bytes.Equal(want, have) {
				t.Errorf("%s = %s, want %s", k, have, want)
			}
		}
	}
}

// capture is a transport that keeps the JSON of the last message.
type capture struct{ last []byte }

func (c *capture) Send(m *gelf.Message) error {
	raw, err := logship.MarshalMessage(m)
	c.last = raw
	return err
}
func (c *capture) Close() error { return nil }

// FuzzRedact plants a credential under a sensitive key (in the case the
// fuzzer picks) at any depth of a JSON body around the fuzzer's own
// document, in a header and in the query string, formats the whole event
// as a connector does, and checks the credential is nowhere in the
// message while an ordinary value next to it is. limit cuts the body at
// any point, so the text redaction of cut bodies is fuzzed too.
func FuzzRedact(f *testing.F) {
	f.Add([]byte(`{"a":[1,{"b":"c"}]}`), uint8(0), uint16(0), uint8(3), "x=1&y=2", uint16(0))
	f.Add([]byte(`[]`), uint8(5), uint16(0xffff), uint8(0), "", uint16(40))
	f.Add([]byte(`"just text"`), uint8(9), uint16(0x5555), uint8(11), "a=%zz&b", uint16(7))
	f.Add([]byte(`{"password":{"x":[{"y":1}]}}`), uint8(13), uint16(0xaaaa), uint8(7), "filter=(a%3D1)", uint16(200))
	f.Add([]byte("not json at all \xff"), uint8(2), uint16(3), uint8(1), "api_key=other", uint16(1))
	const secret = "Zq9Secr3tVALUEq9Z"
	f.Fuzz(func(t *testing.T, doc []byte, which uint8, caseMask uint16, depth uint8, query string, limit uint16) {
		if bytes.Contains(bytes.ToLower(doc), []byte("zq9")) || strings.Contains(strings.ToLower(query), "zq9") {
			t.Skip("the fuzzer's input holds the planted value")
		}
		key := []byte(logship.Sensitive[int(which)%len(logship.Sensitive)])
		for i := range key {
			if caseMask&(1<<(i%16)) != 0 && key[i] >= 'a' && key[i] <= 'z' {
				key[i] -= 'a' - 'A'
			}
			if key[i] == '_' && caseMask&(1<<((i+8)%16)) != 0 {
				key[i] = '-'
			}
		}
		// The planted pair at depth, in objects and arrays by turns.
		var planted any = map[string]any{string(key): secret, "visible": "plain-value"}
		for d := 0; d < int(depth%12); d++ {
			if d%2 == 0 {
				planted = []any{planted}
			} else {
				planted = map[string]any{"level" + string(rune('a'+d)): planted}
			}
		}
		var around any = string(doc)
		if json.Valid(doc) {
			around = json.RawMessage(doc)
		}
		body, err := json.Marshal(map[string]any{"doc": around, "nested": planted})
		if err != nil {
			t.Skip()
		}
		q := url.QueryEscape(string(key)) + "=" + secret
		if query != "" {
			q = query + "&" + q
		}
		ev := &logship.Event{
			Time: time.Unix(1, 0), Method: "POST", Path: "/api/v2/db/x", Query: q, Status: 200,
			Header:  map[string][]string{string(key): {secret}, "X-Plain": {"plain-header"}},
			Request: logship.Body{ContentType: "application/json", Data: body, Size: int64(len(body))},
		}
		tr := &capture{}
		c, err := logship.New(logship.Config{Protocol: "http", ContentLimit: int(limit) + 1, Context: []string{"_event"}},
			logship.Options{Transport: tr})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.SendNow(ev); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(tr.last, []byte(secret)) {
			t.Fatalf("the credential under %q left in %s", key, tr.last)
		}
		if !bytes.Contains(tr.last, []byte("plain-header")) {
			t.Fatalf("an ordinary header was lost: %s", tr.last)
		}
		if int(limit)+1 >= len(body) && utf8.Valid(body) && !bytes.Contains(tr.last, []byte("plain-value")) {
			t.Fatalf("an ordinary body value was lost: %s", tr.last)
		}
	})
}
