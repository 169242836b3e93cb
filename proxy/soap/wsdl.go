package soap

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hooklift/gowsdl"
)

// Namespaces of the WSDL and SOAP vocabularies.
const (
	nsWSDL     = "http://schemas.xmlsoap.org/wsdl/"
	nsSOAP11B  = "http://schemas.xmlsoap.org/wsdl/soap/"
	nsSOAP12B  = "http://schemas.xmlsoap.org/wsdl/soap12/"
	nsXSD      = "http://www.w3.org/2001/XMLSchema"
	nsXSI      = "http://www.w3.org/2001/XMLSchema-instance"
	nsSOAPEnc  = "http://schemas.xmlsoap.org/soap/encoding/"
	nsEnv11    = "http://schemas.xmlsoap.org/soap/envelope/"
	nsEnv12    = "http://www.w3.org/2003/05/soap-envelope"
	nsSOAP12En = "http://www.w3.org/2003/05/soap-encoding"
)

// Limits of WSDL loading.
const (
	maxDocBytes = 16 << 20 // one WSDL or XSD document
	maxDocs     = 64       // documents per WSDL, imports included
)

// Definitions is a loaded WSDL: the operations of one SOAP binding and
// the schema their messages use.
type Definitions struct {
	// Version is the binding's SOAP version, "1.1" or "1.2".
	Version string
	// Endpoint is the address of the binding's port.
	Endpoint string
	// Operations are in WSDL order.
	Operations []*Operation
	byName     map[string]*Operation
	// types are the named complex types (soapvar's type_name) and
	// typeNS their namespaces.
	types  map[string]*ctype
	typeNS map[string]string
}

// Operation is one operation of the binding.
type Operation struct {
	// Name is the operation's name as the WSDL spells it.
	Name string
	// Doc is its documentation.
	Doc string
	// Action is the SOAPAction.
	Action string
	// RPC is true for rpc style, Encoded for use="encoded".
	RPC, Encoded bool
	// Namespace is the rpc wrapper element's namespace.
	Namespace string
	// Input and Output are the message parts resolved against the schema.
	Input, Output []*node
}

// Lookup finds an operation by name, case-insensitively, or by its
// documented path (lowercase, underscores removed).
func (d *Definitions) Lookup(name string) (*Operation, bool) {
	if op, ok := d.byName[strings.ToLower(name)]; ok {
		return op, true
	}
	for _, op := range d.Operations {
		if pathName(op.Name) == pathName(name) {
			return op, true
		}
	}
	return nil, false
}

// bindDoc is the part of a WSDL gowsdl does not model: SOAP 1.2 bindings
// and addresses next to 1.1's.
type bindDoc struct {
	Bindings []xBinding `xml:"http://schemas.xmlsoap.org/wsdl/ binding"`
	Services []xService `xml:"http://schemas.xmlsoap.org/wsdl/ service"`
}

type xBinding struct {
	Name string        `xml:"name,attr"`
	Type string        `xml:"type,attr"`
	S11  *xSoapBinding `xml:"http://schemas.xmlsoap.org/wsdl/soap/ binding"`
	S12  *xSoapBinding `xml:"http://schemas.xmlsoap.org/wsdl/soap12/ binding"`
	Ops  []xBindOp     `xml:"http://schemas.xmlsoap.org/wsdl/ operation"`
}

type xSoapBinding struct {
	Style string `xml:"style,attr"`
}

type xBindOp struct {
	Name string   `xml:"name,attr"`
	S11  *xSoapOp `xml:"http://schemas.xmlsoap.org/wsdl/soap/ operation"`
	S12  *xSoapOp `xml:"http://schemas.xmlsoap.org/wsdl/soap12/ operation"`
	In   xBindIO  `xml:"http://schemas.xmlsoap.org/wsdl/ input"`
}

type xSoapOp struct {
	Action string `xml:"soapAction,attr"`
	Style  string `xml:"style,attr"`
}

type xBindIO struct {
	B11 *xBody `xml:"http://schemas.xmlsoap.org/wsdl/soap/ body"`
	B12 *xBody `xml:"http://schemas.xmlsoap.org/wsdl/soap12/ body"`
}

type xBody struct {
	Use       string `xml:"use,attr"`
	Namespace string `xml:"namespace,attr"`
}

type xService struct {
	Ports []xPort `xml:"http://schemas.xmlsoap.org/wsdl/ port"`
}

type xPort struct {
	Binding string `xml:"binding,attr"`
	A11     *xAddr `xml:"http://schemas.xmlsoap.org/wsdl/soap/ address"`
	A12     *xAddr `xml:"http://schemas.xmlsoap.org/wsdl/soap12/ address"`
}

type xAddr struct {
	Location string `xml:"location,attr"`
}

// arrayDoc reads what gowsdl does not model of a WSDL's schemas: the
// SOAP-encoded array types (complexContent restrictions of
// soapenc:Array) and the prefixes in scope.
type arrayDoc struct {
	Attrs   []xml.Attr    `xml:",any,attr"`
	Schemas []arraySchema `xml:"types>schema"`
}

// arraySchema is one schema's array types.
type arraySchema struct {
	TargetNamespace string      `xml:"targetNamespace,attr"`
	Attrs           []xml.Attr  `xml:",any,attr"`
	Types           []arrayType `xml:"complexType"`
}

type arrayType struct {
	Name        string `xml:"name,attr"`
	Restriction *struct {
		Base  string `xml:"base,attr"`
		Attrs []struct {
			Ref       string `xml:"ref,attr"`
			ArrayType string `xml:"http://schemas.xmlsoap.org/wsdl/ arrayType,attr"`
		} `xml:"attribute"`
		Items []struct {
			Type string `xml:"type,attr"`
		} `xml:"sequence>element"`
	} `xml:"complexContent>restriction"`
}

// prefixes adds the xmlns declarations among attrs to m.
func prefixes(m map[string]string, attrs []xml.Attr) map[string]string {
	out := make(map[string]string, len(m)+len(attrs))
	for k, v := range m {
		out[k] = v
	}
	for _, a := range attrs {
		if a.Name.Space == "xmlns" {
			out[a.Name.Local] = a.Value
		} else if a.Name.Space == "" && a.Name.Local == "xmlns" {
			out[""] = a.Value
		}
	}
	return out
}

// addArrays records a schema's SOAP-encoded array types and their items'
// type ("xsd:string[]" → xsd:string; a sequence's element type when the
// restriction has no arrayType).
func (s *schemaSet) addArrays(x arraySchema, outer map[string]string) {
	xmlns := prefixes(outer, x.Attrs)
	for _, t := range x.Types {
		r := t.Restriction
		if r == nil || local(r.Base) != "Array" {
			continue
		}
		item := ""
		for _, a := range r.Attrs {
			if a.ArrayType != "" {
				item, _, _ = strings.Cut(a.ArrayType, "[")
			}
		}
		if item == "" && len(r.Items) > 0 {
			item = r.Items[0].Type
		}
		if item == "" {
			item = "xsd:anyType"
		}
		s.arrays[qname{x.TargetNamespace, t.Name}] = resolveQName(strings.TrimSpace(item), xmlns)
	}
}

// wsdlDoc is one parsed WSDL document with the prefixes it declares.
type wsdlDoc struct {
	w *gowsdl.WSDL
	b bindDoc
}

// loader reads WSDL and XSD documents by URL or from the storage folder.
type loader struct {
	client *http.Client
	dir    string // DIR/storage/wsdl
	docs   int
	seen   map[string]bool
}

// read returns a document and its canonical location (the base of
// relative references).
func (l *loader) read(ctx context.Context, ref string) ([]byte, error) {
	if l.docs++; l.docs > maxDocs {
		return nil, fmt.Errorf("the WSDL imports more than %d documents", maxDocs)
	}
	if strings.HasPrefix(ref, "http://") || strings.HasPrefix(ref, "https://") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref, nil)
		if err != nil {
			return nil, err
		}
		resp, err := l.client.Do(req)
		if err != nil {
			return nil, &fetchError{URL: redact(ref), Err: err}
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("fetching %s: HTTP status %d", redact(ref), resp.StatusCode)
		}
		return readLimited(resp.Body, redact(ref))
	}
	f, err := os.Open(ref)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("WSDL file %s does not exist in storage/wsdl", filepath.Base(ref))
		}
		return nil, err
	}
	defer f.Close()
	return readLimited(f, filepath.Base(ref))
}

func readLimited(r io.Reader, name string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxDocBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxDocBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, maxDocBytes)
	}
	return data, nil
}

// fetchError is a WSDL or schema that could not be fetched (network).
type fetchError struct {
	URL string
	Err error
}

func (e *fetchError) Error() string { return fmt.Sprintf("fetching %s: %v", e.URL, e.Err) }
func (e *fetchError) Unwrap() error { return e.Err }

// redact hides credentials and the query of a URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "the WSDL URL"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// resolveRef resolves ref against the document at base; file references
// stay inside the storage folder.
func (l *loader) resolveRef(base, ref string) (string, error) {
	if u, err := url.Parse(ref); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return ref, nil
	}
	if strings.HasPrefix(base, "http://") || strings.HasPrefix(base, "https://") {
		b, err := url.Parse(base)
		if err != nil {
			return "", err
		}
		r, err := url.Parse(ref)
		if err != nil {
			return "", fmt.Errorf("bad import location %q", ref)
		}
		return b.ResolveReference(r).String(), nil
	}
	if strings.Contains(ref, ":") || filepath.IsAbs(ref) {
		return "", fmt.Errorf("import location %q is neither an http(s) URL nor a path relative to the WSDL", ref)
	}
	p := filepath.Join(filepath.Dir(base), filepath.FromSlash(ref))
	if rel, err := filepath.Rel(l.dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("import location %q leaves storage/wsdl", ref)
	}
	return p, nil
}

// load reads the WSDL at ref (a URL or a path under l.dir), its imports and
// schemas, and builds the operations of the binding of the wanted SOAP
// version ("" prefers 1.1).
func (l *loader) load(ctx context.Context, ref, version string) (*Definitions, error) {
	l.seen = map[string]bool{}
	var docs []*wsdlDoc
	set := newSchemaSet()
	if err := l.loadWSDL(ctx, ref, &docs, set); err != nil {
		return nil, err
	}
	return build(docs, set, version)
}

func (l *loader) loadWSDL(ctx context.Context, ref string, docs *[]*wsdlDoc, set *schemaSet) error {
	if l.seen[ref] {
		return nil
	}
	l.seen[ref] = true
	data, err := l.read(ctx, ref)
	if err != nil {
		return err
	}
	d := &wsdlDoc{w: &gowsdl.WSDL{}}
	if err := xml.Unmarshal(data, d.w); err != nil {
		return fmt.Errorf("the WSDL %s is not valid XML: %w", shortName(ref), err)
	}
	if err := xml.Unmarshal(data, &d.b); err != nil {
		return fmt.Errorf("the WSDL %s is not valid XML: %w", shortName(ref), err)
	}
	var arrays arrayDoc
	if err := xml.Unmarshal(data, &arrays); err == nil {
		outer := prefixes(nil, arrays.Attrs)
		for _, x := range arrays.Schemas {
			set.addArrays(x, outer)
		}
	}
	*docs = append(*docs, d)
	for _, s := range d.w.Types.Schemas {
		if err := l.addSchema(ctx, ref, s, set); err != nil {
			return err
		}
	}
	for _, imp := range d.w.Imports {
		if imp.Location == "" {
			continue
		}
		next, err := l.resolveRef(ref, imp.Location)
		if err != nil {
			return err
		}
		if strings.HasSuffix(strings.ToLower(strings.SplitN(next, "?", 2)[0]), ".xsd") {
			if err := l.loadXSD(ctx, next, set); err != nil {
				return err
			}
			continue
		}
		if err := l.loadWSDL(ctx, next, docs, set); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) addSchema(ctx context.Context, base string, s *gowsdl.XSDSchema, set *schemaSet) error {
	set.add(s)
	var locs []string
	for _, imp := range s.Imports {
		if imp.SchemaLocation != "" {
			locs = append(locs, imp.SchemaLocation)
		}
	}
	for _, inc := range s.Includes {
		if inc.SchemaLocation != "" {
			locs = append(locs, inc.SchemaLocation)
		}
	}
	for _, loc := range locs {
		next, err := l.resolveRef(base, loc)
		if err != nil {
			return err
		}
		if err := l.loadXSD(ctx, next, set); err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) loadXSD(ctx context.Context, ref string, set *schemaSet) error {
	if l.seen[ref] {
		return nil
	}
	l.seen[ref] = true
	data, err := l.read(ctx, ref)
	if err != nil {
		return err
	}
	s := &gowsdl.XSDSchema{}
	if err := xml.Unmarshal(data, s); err != nil {
		return fmt.Errorf("the schema %s is not valid XML: %w", shortName(ref), err)
	}
	var arrays arraySchema
	if err := xml.Unmarshal(data, &arrays); err == nil {
		set.addArrays(arrays, nil)
	}
	return l.addSchema(ctx, ref, s, set)
}

func shortName(ref string) string {
	if strings.Contains(ref, "://") {
		return redact(ref)
	}
	return filepath.Base(ref)
}

// build picks the binding and resolves its operations.
func build(docs []*wsdlDoc, set *schemaSet, version string) (*Definitions, error) {
	type found struct {
		b       xBinding
		doc     *wsdlDoc
		version string
	}
	var bindings []found
	for _, d := range docs {
		for _, b := range d.b.Bindings {
			switch {
			case b.S11 != nil:
				bindings = append(bindings, found{b, d, "1.1"})
			case b.S12 != nil:
				bindings = append(bindings, found{b, d, "1.2"})
			}
		}
	}
	if len(bindings) == 0 {
		return nil, errors.New("the WSDL has no SOAP binding")
	}
	pick := bindings[0]
	want := version
	if want == "" {
		want = "1.1"
	}
	for _, b := range bindings {
		if b.version == want {
			pick = b
			break
		}
	}
	defs := &Definitions{Version: pick.version, byName: map[string]*Operation{}, types: set.names, typeNS: set.nsOf}
	if version != "" {
		defs.Version = version
	}
	for _, d := range docs {
		for _, s := range d.b.Services {
			for _, p := range s.Ports {
				if local(p.Binding) != pick.b.Name || defs.Endpoint != "" {
					continue
				}
				if p.A11 != nil && pick.version == "1.1" {
					defs.Endpoint = p.A11.Location
				} else if p.A12 != nil && pick.version == "1.2" {
					defs.Endpoint = p.A12.Location
				}
			}
		}
	}
	// The port type and messages, from whichever document defines them.
	var portType *gowsdl.WSDLPortType
	messages := map[string]*gowsdl.WSDLMessage{}
	msgDoc := map[string]*wsdlDoc{}
	for _, d := range docs {
		for _, pt := range d.w.PortTypes {
			if pt.Name == local(pick.b.Type) && portType == nil {
				portType = pt
			}
		}
		for _, m := range d.w.Messages {
			if _, ok := messages[m.Name]; !ok {
				messages[m.Name], msgDoc[m.Name] = m, d
			}
		}
	}
	if portType == nil {
		return nil, fmt.Errorf("the WSDL's binding %s names port type %s, which it does not define", pick.b.Name, pick.b.Type)
	}
	style := ""
	if pick.b.S11 != nil {
		style = pick.b.S11.Style
	} else if pick.b.S12 != nil {
		style = pick.b.S12.Style
	}
	bops := map[string]xBindOp{}
	for _, bo := range pick.b.Ops {
		bops[bo.Name] = bo
	}
	for _, pto := range portType.Operations {
		bo, ok := bops[pto.Name]
		if !ok {
			continue
		}
		op := &Operation{Name: pto.Name, Doc: strings.TrimSpace(pto.Doc)}
		opStyle := style
		if so := firstOp(bo); so != nil {
			op.Action = so.Action
			if so.Style != "" {
				opStyle = so.Style
			}
		}
		op.RPC = opStyle == "rpc"
		if body := firstBody(bo.In); body != nil {
			op.Encoded = body.Use == "encoded"
			op.Namespace = body.Namespace
		}
		var err error
		if op.Input, err = parts(messages, msgDoc, pto.Input.Message, set, op.RPC); err != nil {
			return nil, fmt.Errorf("operation %s: %w", op.Name, err)
		}
		if op.Output, err = parts(messages, msgDoc, pto.Output.Message, set, op.RPC); err != nil {
			return nil, fmt.Errorf("operation %s: %w", op.Name, err)
		}
		if _, dup := defs.byName[strings.ToLower(op.Name)]; dup {
			continue // overloaded names: the first wins, as in PHP's function list
		}
		defs.Operations = append(defs.Operations, op)
		defs.byName[strings.ToLower(op.Name)] = op
	}
	// Every named complex type, for soapvar's type_name (an extension
	// of an operation's type, say): built now, read-only from here on.
	for q, d := range set.complex {
		set.named(q, d)
	}
	return defs, nil
}

func firstOp(bo xBindOp) *xSoapOp {
	if bo.S11 != nil {
		return bo.S11
	}
	return bo.S12
}

func firstBody(io xBindIO) *xBody {
	if io.B11 != nil {
		return io.B11
	}
	return io.B12
}

// parts resolves a message's parts: elements (document) or typed parts
// (rpc, named after the part).
func parts(messages map[string]*gowsdl.WSDLMessage, docs map[string]*wsdlDoc, name string, set *schemaSet, rpc bool) ([]*node, error) {
	if name == "" {
		return nil, nil
	}
	m, ok := messages[local(name)]
	if !ok {
		return nil, fmt.Errorf("message %s is not defined", name)
	}
	xmlns := docs[local(name)].w.Xmlns
	var out []*node
	for _, p := range m.Parts {
		switch {
		case p.Element != "":
			q := resolveQName(p.Element, xmlns)
			n := set.globalElement(q)
			if n == nil {
				return nil, fmt.Errorf("element %s of message %s is not defined", p.Element, m.Name)
			}
			out = append(out, n)
		case p.Type != "":
			n := &node{Name: p.Name, Min: 1, Max: 1}
			set.typeInto(n, resolveQName(p.Type, xmlns))
			out = append(out, n)
		}
	}
	return out, nil
}

// local strips a prefix.
func local(s string) string {
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// qname is a namespace-qualified name.
type qname struct{ Space, Local string }

// resolveQName resolves "prefix:name" against the declared prefixes.
func resolveQName(s string, xmlns map[string]string) qname {
	prefix, name, ok := strings.Cut(s, ":")
	if !ok {
		return qname{Space: xmlns[""], Local: s}
	}
	return qname{Space: xmlns[prefix], Local: name}
}
