package soap

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/beevik/etree"
)

// nsXOP is the XOP include namespace.
const nsXOP = "http://www.w3.org/2004/08/xop/include"

// maxParts bounds the parts of an MTOM answer.
const maxParts = 1000

// unpackXOP turns an MTOM/XOP answer (multipart/related: the SOAP
// envelope in its root part, binary content in other parts referenced by
// xop:Include elements) into a plain envelope, each xop:Include replaced
// by the base64 text of the part it names, as if the service had sent it
// inline. An answer that is not multipart/related is returned as it is.
func unpackXOP(contentType string, data []byte) ([]byte, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.EqualFold(mt, "multipart/related") {
		return data, nil
	}
	if params["boundary"] == "" {
		return nil, errors.New("multipart answer without a boundary")
	}
	start := strings.Trim(params["start"], "<>")
	mr := multipart.NewReader(bytes.NewReader(data), params["boundary"])
	var root []byte
	parts := map[string][]byte{}
	for i := 0; ; i++ {
		if i > maxParts {
			return nil, fmt.Errorf("MTOM answer with more than %d parts", maxParts)
		}
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("MTOM answer: %w", err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("MTOM answer: %w", err)
		}
		if strings.EqualFold(strings.TrimSpace(p.Header.Get("Content-Transfer-Encoding")), "base64") {
			dec, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(body)), ""))
			if err != nil {
				return nil, fmt.Errorf("MTOM part: %w", err)
			}
			body = dec
		}
		id := strings.Trim(strings.TrimSpace(p.Header.Get("Content-ID")), "<>")
		if root == nil && (start == "" || id == start) {
			root = body
			continue
		}
		parts[id] = body
	}
	if root == nil {
		return nil, errors.New("MTOM answer without its root part")
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(root); err != nil {
		return nil, fmt.Errorf("the answer is not XML: %w", err)
	}
	var includes []*etree.Element
	var walk func(el *etree.Element)
	walk = func(el *etree.Element) {
		for _, c := range el.ChildElements() {
			if c.Tag == "Include" && c.NamespaceURI() == nsXOP {
				includes = append(includes, c)
				continue
			}
			walk(c)
		}
	}
	if doc.Root() != nil {
		walk(doc.Root())
	}
	for _, inc := range includes {
		href := inc.SelectAttrValue("href", "")
		id := strings.TrimPrefix(href, "cid:")
		if u, err := url.PathUnescape(id); err == nil {
			id = u
		}
		part, ok := parts[id]
		if !ok {
			return nil, fmt.Errorf("MTOM answer: xop:Include names %q, which is not among its parts", href)
		}
		parent := inc.Parent()
		parent.RemoveChild(inc)
		parent.SetText(base64.StdEncoding.EncodeToString(part))
	}
	var buf bytes.Buffer
	if _, err := doc.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
