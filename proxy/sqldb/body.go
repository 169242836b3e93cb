package sqldb

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"
)

// The body of a POST of one record, read as text. Decoding a record into
// a map[string]any costs a map, a string per key and a boxed value per
// member; a POST of one flat record ({"resource":[{…}]} or [{…}], a body
// of at most rawBodyMax bytes whose members are all scalars) is instead
// kept as its text, and its members as substrings of it (rawRecord), which
// create.go writes by the table's columns. Whatever that path does not
// handle, and every other body, is decoded as before (materialize), from
// the same text, so the answer is the same either way.

// rawBodyMax is the largest body read whole to be kept as a rawRecord.
const rawBodyMax = 16 << 10

// rawBodies turns rawRecord on; tests turn it off to compare the two paths.
var rawBodies = true

// rawRecord is the one record of a POST body, as text.
type rawRecord struct {
	// body is the whole body; keys and values are substrings of it.
	body   string
	fields []rawField
	arr    [12]rawField // fields' first storage
}

// rawField is one member of the record: its key as written (no escapes)
// and its value.
type rawField struct {
	key string
	val scalar
}

// readRaw reads a body of at most rawBodyMax bytes whole and, when it is a
// POST body of one flat record, returns it as a rawRecord (and nil). Else
// it returns a reader that gives what the body would have given: the bytes
// read, then the rest of the body (or the error its last read returned,
// with that read's bytes). pb is the scratch buffer, in use until that
// reader has been read.
func readRaw(body io.Reader, pb *[]byte) (*rawRecord, io.Reader) {
	buf := *pb
	if cap(buf) < rawBodyMax {
		buf = make([]byte, 0, rawBodyMax)
		*pb = buf
	}
	buf = buf[:rawBodyMax]
	n, last := 0, 0
	var err error
	for n < len(buf) && err == nil {
		var m int
		last = n
		m, err = body.Read(buf[n:])
		n += m
	}
	switch {
	case err == io.EOF:
		if json.Valid(buf[:n]) {
			if rec := parseRawRecord(string(buf[:n])); rec != nil {
				return rec, nil
			}
		}
		return nil, bytes.NewReader(buf[:n])
	case err != nil:
		return nil, io.MultiReader(bytes.NewReader(buf[:last]), &failingRead{data: buf[last:n], err: err})
	}
	return nil, io.MultiReader(bytes.NewReader(buf[:n]), body) // larger than rawBodyMax
}

// failingRead gives data and then err, as the body's last read did.
type failingRead struct {
	data []byte
	err  error
}

func (f *failingRead) Read(p []byte) (int, error) {
	n := copy(p, f.data)
	f.data = f.data[n:]
	if len(f.data) > 0 {
		return n, nil
	}
	return n, f.err
}

// parseRawRecord reads s, valid JSON, as {"resource":[record]} or
// [record] where record is an object of scalars; nil when s is anything
// else.
func parseRawRecord(s string) *rawRecord {
	p := rawParser{s: s}
	p.space()
	wrapped := p.peek() == '{'
	switch p.next() {
	case '[':
	case '{':
		// The one member "resource", an array.
		p.space()
		if key, ok := p.key(); !ok || key != "resource" {
			return nil
		}
		p.space()
		if p.next() != '[' {
			return nil
		}
	default:
		return nil
	}
	p.space()
	if p.next() != '{' {
		return nil
	}
	rec := &rawRecord{body: s}
	rec.fields = rec.arr[:0]
	p.space()
	if p.peek() == '}' {
		p.i++
	} else {
		for {
			p.space()
			key, ok := p.key()
			if !ok {
				return nil
			}
			p.space()
			val, ok := p.scalar()
			if !ok {
				return nil
			}
			rec.fields = append(rec.fields, rawField{key: key, val: val})
			p.space()
			if c := p.next(); c == '}' {
				break
			} else if c != ',' {
				return nil
			}
		}
	}
	p.space()
	if p.next() != ']' {
		return nil
	}
	p.space()
	if wrapped {
		if p.next() != '}' {
			return nil
		}
		p.space()
	}
	if p.i != len(s) {
		return nil
	}
	return rec
}

// rawParser walks a valid JSON text.
type rawParser struct {
	s string
	i int
}

func (p *rawParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *rawParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *rawParser) next() byte {
	c := p.peek()
	p.i++
	return c
}

// key reads a member's key and its colon; ok is false for a key written
// with escapes or invalid UTF-8 (which the decoder would change).
func (p *rawParser) key() (string, bool) {
	if p.next() != '"' {
		return "", false
	}
	start := p.i
	end := strings.IndexByte(p.s[start:], '"')
	if end < 0 {
		return "", false
	}
	k := p.s[start : start+end]
	if strings.IndexByte(k, '\\') >= 0 || !utf8.ValidString(k) {
		return "", false
	}
	p.i = start + end + 1
	p.space()
	if p.next() != ':' {
		return "", false
	}
	return k, true
}

// scalar reads a scalar value as encoding/json decodes it (with
// UseNumber); ok is false for an object or array.
func (p *rawParser) scalar() (scalar, bool) {
	switch c := p.peek(); {
	case c == '"':
		start := p.i
		escaped := false
		i := start + 1
		for ; i < len(p.s); i++ {
			if c := p.s[i]; c == '\\' {
				escaped = true
				i++
			} else if c == '"' {
				break
			}
		}
		p.i = i + 1
		v := p.s[start+1 : i]
		if escaped || !utf8.ValidString(v) {
			// Escapes, and invalid UTF-8 (replaced by U+FFFD), as the
			// decoder reads them.
			var out string
			if err := json.Unmarshal([]byte(p.s[start:p.i]), &out); err != nil {
				return scalar{}, false
			}
			v = out
		}
		return scalar{kind: scalarString, s: v}, true
	case c == 't':
		p.i += len("true")
		return scalar{kind: scalarBool, b: true}, true
	case c == 'f':
		p.i += len("false")
		return scalar{kind: scalarBool}, true
	case c == 'n':
		p.i += len("null")
		return scalar{}, true
	case c == '-' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) {
			switch p.s[p.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return scalar{kind: scalarNumber, s: p.s[start:p.i]}, true
			}
			p.i++
		}
		return scalar{kind: scalarNumber, s: p.s[start:p.i]}, true
	}
	return scalar{}, false
}

// materialize decodes the raw record as readBody decodes a body, into
// o.records, for the general path.
func (o *options) materialize() error {
	raw := o.raw
	if raw == nil {
		return nil
	}
	o.raw = nil
	var tmp options
	if err := tmp.readBody(strings.NewReader(raw.body), map[string]any{}, false); err != nil {
		return err
	}
	o.records = tmp.records
	return nil
}
