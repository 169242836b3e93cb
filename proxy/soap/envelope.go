package soap

import (
	"bytes"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// WSSE namespaces and URIs.
const (
	nsWSSE         = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsWSU          = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	wssePassDigest = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
	wsseBase64     = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"
)

// inputError is a request value that does not fit the operation's input
// (400).
type inputError struct{ msg string }

func (e *inputError) Error() string { return e.msg }

func badInput(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}

// envelope builds SOAP request envelopes.
type envelope struct {
	version string // "1.1" or "1.2"
	doc     *etree.Document
	env     *etree.Element
	header  *etree.Element
	body    *etree.Element
	strict  bool // unknown JSON keys are errors (POST); GET ignores them
	// types and typeNS are the WSDL's named complex types, for soapvar.
	types  map[string]*ctype
	typeNS map[string]string
	// prefixes are the namespaces declared on the envelope for xsi:type
	// and arrayType values.
	prefixes map[string]string
}

func newEnvelope(version string) *envelope {
	e := &envelope{version: version, doc: etree.NewDocument()}
	e.doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	e.env = e.doc.CreateElement("soap:Envelope")
	e.env.CreateAttr("xmlns:soap", e.envNS())
	e.env.CreateAttr("xmlns:xsi", nsXSI)
	e.env.CreateAttr("xmlns:xsd", nsXSD)
	return e
}

func (e *envelope) envNS() string {
	if e.version == "1.2" {
		return nsEnv12
	}
	return nsEnv11
}

func (e *envelope) headerElem() *etree.Element {
	if e.header == nil {
		e.header = etree.NewElement("soap:Header")
		e.env.InsertChildAt(0, e.header)
	}
	return e.header
}

// genericHeader adds a header element in namespace ns with data's
// content.
func (e *envelope) genericHeader(ns, name string, data any, mustUnderstand bool, actor string) {
	h := e.headerElem().CreateElement(name)
	h.CreateAttr("xmlns", ns)
	if mustUnderstand {
		if e.version == "1.2" {
			h.CreateAttr("soap:mustUnderstand", "true")
		} else {
			h.CreateAttr("soap:mustUnderstand", "1")
		}
	}
	if actor != "" {
		if e.version == "1.2" {
			h.CreateAttr("soap:role", actor)
		} else {
			h.CreateAttr("soap:actor", actor)
		}
	}
	untyped(h, data)
}

// wsse adds a WSSE UsernameToken with a password digest.
func (e *envelope) wsse(user, password, id string, now time.Time, nonce []byte) {
	sec := e.headerElem().CreateElement("wsse:Security")
	sec.CreateAttr("xmlns:wsse", nsWSSE)
	sec.CreateAttr("xmlns:wsu", nsWSU)
	if e.version == "1.2" {
		sec.CreateAttr("soap:mustUnderstand", "true")
	} else {
		sec.CreateAttr("soap:mustUnderstand", "1")
	}
	tok := sec.CreateElement("wsse:UsernameToken")
	if id != "" {
		tok.CreateAttr("wsu:Id", id)
	}
	created := now.UTC().Format("2006-01-02T15:04:05Z")
	tok.CreateElement("wsse:Username").SetText(user)
	pw := tok.CreateElement("wsse:Password")
	pw.CreateAttr("Type", wssePassDigest)
	pw.SetText(PasswordDigest(nonce, created, password))
	n := tok.CreateElement("wsse:Nonce")
	n.CreateAttr("EncodingType", wsseBase64)
	n.SetText(base64.StdEncoding.EncodeToString(nonce))
	tok.CreateElement("wsu:Created").SetText(created)
}

// PasswordDigest is the WSSE UsernameToken digest:
// base64(sha1(nonce + created + password)).
func PasswordDigest(nonce []byte, created, password string) string {
	h := sha1.New()
	h.Write(nonce)
	h.Write([]byte(created))
	h.Write([]byte(password))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

func newNonce() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return b
}

// call writes the body of a call to op with the argument object args.
func (e *envelope) call(op *Operation, args map[string]any) error {
	e.body = e.env.CreateElement("soap:Body")
	if op.RPC {
		w := e.body.CreateElement("m:" + op.Name)
		w.CreateAttr("xmlns:m", op.Namespace)
		if op.Encoded {
			enc := nsSOAPEnc
			if e.version == "1.2" {
				enc = nsSOAP12En
			}
			w.CreateAttr("soap:encodingStyle", enc)
		}
		if _, ok := soapVarOf(args); ok && len(op.Input) > 0 {
			// A soapvar in place of the whole payload is the first part,
			// as PHP passes the payload as the call's first argument.
			args = map[string]any{op.Input[0].Name: args}
		}
		for _, p := range op.Input {
			if err := e.member(w, "", p, args, op.Encoded); err != nil {
				return err
			}
		}
		return e.unknown(op.Input, nil, args, op.Name)
	}
	switch len(op.Input) {
	case 0:
		return nil
	case 1:
		p := op.Input[0]
		if p.Complex != nil {
			// The JSON object is the element's content.
			return e.element(e.body, "", p, args, false, "")
		}
		return e.member(e.body, "", p, args, false)
	}
	for _, p := range op.Input {
		if err := e.member(e.body, "", p, args, false); err != nil {
			return err
		}
	}
	return e.unknown(op.Input, nil, args, op.Name)
}

// unknown refuses keys that are no field or attribute of c (strict
// mode); c may be nil.
func (e *envelope) unknown(fields []*node, c *ctype, args map[string]any, where string) error {
	if !e.strict {
		return nil
	}
	var extra []string
	for k := range args {
		found := false
		for _, f := range fields {
			if strings.EqualFold(f.Name, k) {
				found = true
				break
			}
		}
		if c != nil && (c.attr(k) != nil || (k == "_" && c.Text != "")) {
			found = true
		}
		if !found && !strings.EqualFold(k, "soapvar") {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return badInput("'%s' has no field %s.", where, strings.Join(extra, ", "))
	}
	return nil
}

// lookupArg finds a key case-sensitively, then case-insensitively.
func lookupArg(args map[string]any, name string) (any, bool) {
	if v, ok := args[name]; ok {
		return v, true
	}
	for k, v := range args {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// member writes field f of an object from args.
func (e *envelope) member(parent *etree.Element, defNS string, f *node, args map[string]any, encoded bool) error {
	v, ok := lookupArg(args, f.Name)
	if !ok || v == nil {
		switch {
		case ok && f.Nillable:
			el := newChild(parent, defNS, f)
			el.CreateAttr("xsi:nil", "true")
			return nil
		case f.Min > 0 && !f.Nillable && f.Scalar != "" && f.Scalar != "anyType":
			return badInput("Field '%s' is required.", f.Name)
		}
		return nil
	}
	if arr, isArr := v.([]any); isArr && (f.repeated() || f.Complex == nil || !arrayWrapper(f.Complex)) {
		if !f.repeated() {
			return badInput("Field '%s' takes one value, not a list.", f.Name)
		}
		for _, item := range arr {
			if err := e.element(parent, defNS, f, item, encoded, f.Name); err != nil {
				return err
			}
		}
		return nil
	}
	return e.element(parent, defNS, f, v, encoded, f.Name)
}

// arrayWrapper reports whether a complex type is an "ArrayOf" wrapper: one
// repeated child, which a bare JSON list may fill.
func arrayWrapper(c *ctype) bool { return len(c.Fields) == 1 && c.Fields[0].repeated() }

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// typeAttrs adds, in an encoded message, what SOAP encoding says of a
// complex value: xsi:type naming its type and, for an array, the
// soapenc array type and size (1.1) or item type and size (1.2).
func (e *envelope) typeAttrs(el *etree.Element, f *node, c *ctype, v any) {
	if c.Array == nil {
		if f.TypeName != "" {
			el.CreateAttr("xsi:type", e.prefixed(el, f.TypeNS, f.TypeName))
		}
		return
	}
	n := 0
	switch x := v.(type) {
	case []any:
		n = len(x)
	case map[string]any:
		if items, ok := lookupArg(x, c.Fields[0].Name); ok {
			if list, isList := items.([]any); isList {
				n = len(list)
			} else if items != nil {
				n = 1
			}
		}
	}
	if e.version != "1.2" {
		el.CreateAttr("xsi:type", "soapenc:Array")
	}
	e.arraySize(el, c, n)
}

// prefixed returns name qualified for an attribute value on el: "xsd:"
// for the XSD namespace, else a prefix declared on the envelope.
func (e *envelope) prefixed(el *etree.Element, space, name string) string {
	switch space {
	case "":
		return name
	case nsXSD, "http://www.w3.org/1999/XMLSchema", "http://www.w3.org/2000/10/XMLSchema":
		return "xsd:" + name
	case nsSOAPEnc:
		el.CreateAttr("xmlns:soapenc", nsSOAPEnc)
		return "soapenc:" + name
	}
	if p, ok := e.prefixes[space]; ok {
		return p + ":" + name
	}
	// Declared once, on the envelope.
	p := "ns" + strconv.Itoa(len(e.prefixes)+1)
	if e.prefixes == nil {
		e.prefixes = map[string]string{}
	}
	e.prefixes[space] = p
	e.env.CreateAttr("xmlns:"+p, space)
	return p + ":" + name
}

// newChild creates the element of f, declaring its namespace when it
// differs from the inherited default.
func newChild(parent *etree.Element, defNS string, f *node) *etree.Element {
	el := parent.CreateElement(f.Name)
	if f.NS != defNS {
		el.CreateAttr("xmlns", f.NS)
	}
	return el
}

func ns(f *node, defNS string) string {
	if f.NS != defNS {
		return f.NS
	}
	return defNS
}

// element writes one occurrence of f with value v.
func (e *envelope) element(parent *etree.Element, defNS string, f *node, v any, encoded bool, path string) error {
	if sv, ok := soapVarOf(v); ok {
		return e.soapVar(parent, defNS, f, sv, encoded, path)
	}
	el := newChild(parent, defNS, f)
	inner := ns(f, defNS)
	if v == nil {
		if f.Nillable {
			el.CreateAttr("xsi:nil", "true")
		}
		return nil
	}
	if f.Complex == nil {
		if f.Scalar == "anyType" {
			untyped(el, v)
			return nil
		}
		text, err := scalarText(f.Scalar, v)
		if err != nil {
			return badInput("Field '%s': %v.", path, err)
		}
		if encoded {
			el.CreateAttr("xsi:type", "xsd:"+f.Scalar)
		}
		el.SetText(text)
		return nil
	}
	c := f.Complex
	if encoded {
		e.typeAttrs(el, f, c, v)
	}
	return e.content(el, inner, f.Name, c, v, encoded, path)
}

// content writes v as the content of el, of complex type c.
func (e *envelope) content(el *etree.Element, inner, name string, c *ctype, v any, encoded bool, path string) error {
	switch x := v.(type) {
	case map[string]any:
		for _, a := range c.Attrs {
			av, ok := lookupArg(x, a.Name)
			if !ok || av == nil {
				if a.Required {
					return badInput("Attribute '%s' is required.", joinPath(path, a.Name))
				}
				continue
			}
			text, err := scalarText(a.Scalar, av)
			if err != nil {
				return badInput("Attribute '%s': %v.", joinPath(path, a.Name), err)
			}
			el.CreateAttr(a.Name, text)
		}
		if c.Text != "" {
			if tv, ok := lookupArg(x, "_"); ok {
				text, err := scalarText(c.Text, tv)
				if err != nil {
					return badInput("Field '%s': %v.", path, err)
				}
				el.SetText(text)
			}
		}
		for _, sub := range c.Fields {
			if err := e.member(el, inner, sub, x, encoded); err != nil {
				if ie, ok := err.(*inputError); ok && path != "" {
					for _, kind := range []string{"Field '", "Attribute '"} {
						if strings.HasPrefix(ie.msg, kind) && !strings.HasPrefix(ie.msg, kind+path+".") {
							ie.msg = kind + path + "." + strings.TrimPrefix(ie.msg, kind)
						}
					}
				}
				return err
			}
		}
		if path == "" {
			return e.unknown(c.Fields, c, x, name)
		}
		return e.unknown(c.Fields, c, x, path)
	case []any:
		if arrayWrapper(c) {
			return e.member(el, inner, c.Fields[0], map[string]any{c.Fields[0].Name: x}, encoded)
		}
		return badInput("Field '%s' takes an object, not a list.", path)
	default:
		if c.Text != "" {
			text, err := scalarText(c.Text, v)
			if err != nil {
				return badInput("Field '%s': %v.", path, err)
			}
			el.SetText(text)
			return nil
		}
		if len(c.Fields) == 0 {
			untyped(el, v)
			return nil
		}
		return badInput("Field '%s' takes an object.", path)
	}
}

var (
	reInteger = regexp.MustCompile(`^[+-]?[0-9]+$`)
)

// scalarText formats a JSON value as the text of a built-in type.
func scalarText(typ string, v any) (string, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		s = strconv.FormatBool(x)
	default:
		return "", fmt.Errorf("a %s takes a scalar value", typ)
	}
	switch scalarKind(typ) {
	case kindInteger:
		s = strings.TrimSpace(s)
		if !reInteger.MatchString(s) {
			return "", fmt.Errorf("%q is not an integer", s)
		}
		if strings.HasPrefix(typ, "unsigned") || typ == "nonNegativeInteger" || typ == "positiveInteger" {
			if strings.HasPrefix(s, "-") {
				return "", fmt.Errorf("%q is negative", s)
			}
		}
	case kindNumber:
		s = strings.TrimSpace(s)
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return "", fmt.Errorf("%q is not a number", s)
		}
	case kindBoolean:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "1":
			s = "true"
		case "false", "0":
			s = "false"
		default:
			return "", fmt.Errorf("%q is not a boolean", s)
		}
	}
	return s, nil
}

// untyped writes a JSON value without a schema: objects as child
// elements in key order, lists as repeated <item> elements.
func untyped(el *etree.Element, v any) {
	switch x := v.(type) {
	case nil:
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if arr, ok := x[k].([]any); ok {
				for _, item := range arr {
					untyped(el.CreateElement(k), item)
				}
				continue
			}
			untyped(el.CreateElement(k), x[k])
		}
	case []any:
		for _, item := range x {
			untyped(el.CreateElement("item"), item)
		}
	default:
		s, _ := scalarText("string", v)
		el.SetText(s)
	}
}

// bytes serialises the envelope.
func (e *envelope) bytes() ([]byte, error) {
	var buf bytes.Buffer
	if _, err := e.doc.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Fault is a SOAP fault (1.1 or 1.2).
type Fault struct {
	Code, String string
	Detail       any
}

// response is a parsed answer: a fault or the body's elements.
type response struct {
	fault *Fault
	body  []*etree.Element
}

// parseResponse reads a SOAP envelope of either version.
func parseResponse(data []byte) (*response, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = false
	if err := doc.ReadFromBytes(data); err != nil {
		return nil, fmt.Errorf("the answer is not XML: %w", err)
	}
	env := doc.Root()
	if env == nil || env.Tag != "Envelope" {
		return nil, fmt.Errorf("the answer is not a SOAP envelope")
	}
	var body *etree.Element
	for _, c := range env.ChildElements() {
		if c.Tag == "Body" {
			body = c
		}
	}
	if body == nil {
		return nil, fmt.Errorf("the SOAP envelope has no Body")
	}
	kids := body.ChildElements()
	if len(kids) > 0 && kids[0].Tag == "Fault" && (kids[0].NamespaceURI() == nsEnv11 || kids[0].NamespaceURI() == nsEnv12) {
		return &response{fault: parseFault(kids[0])}, nil
	}
	return &response{body: kids}, nil
}

func parseFault(f *etree.Element) *Fault {
	out := &Fault{}
	child := func(el *etree.Element, name string) *etree.Element {
		if el == nil {
			return nil
		}
		for _, c := range el.ChildElements() {
			if c.Tag == name {
				return c
			}
		}
		return nil
	}
	text := func(el *etree.Element) string {
		if el == nil {
			return ""
		}
		return strings.TrimSpace(el.Text())
	}
	if c := child(f, "faultcode"); c != nil { // 1.1
		out.Code = faultCode(c)
		out.String = text(child(f, "faultstring"))
		if d := child(f, "detail"); d != nil && len(d.ChildElements()) > 0 {
			out.Detail = decodeUntyped(d)
		}
		return out
	}
	code := child(f, "Code") // 1.2
	if v := child(code, "Value"); v != nil {
		out.Code = faultCode(v)
	}
	if sub := text(child(child(code, "Subcode"), "Value")); sub != "" {
		out.Code += " " + sub
	}
	out.String = text(child(child(f, "Reason"), "Text"))
	if d := child(f, "Detail"); d != nil && len(d.ChildElements()) > 0 {
		out.Detail = decodeUntyped(d)
	}
	return out
}

// faultCode reads a fault code, without its prefix when that names the
// SOAP envelope namespace ("soap:Server" is "Server"), as PHP reports it.
func faultCode(el *etree.Element) string {
	s := strings.TrimSpace(el.Text())
	prefix, name, ok := strings.Cut(s, ":")
	if !ok {
		return s
	}
	for e := el; e != nil; e = e.Parent() {
		for _, a := range e.Attr {
			if a.Space == "xmlns" && a.Key == prefix {
				if a.Value == nsEnv11 || a.Value == nsEnv12 {
					return name
				}
				return s
			}
		}
	}
	return s
}

// obj is a JSON object that keeps its keys in document order.
type obj struct {
	keys []string
	vals map[string]any
	rep  map[string]bool // keys made lists by repetition
}

func newObj() *obj { return &obj{vals: map[string]any{}, rep: map[string]bool{}} }

func (o *obj) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *obj) add(k string, v any) {
	cur, ok := o.vals[k]
	if !ok {
		o.set(k, []any{v})
		return
	}
	o.vals[k] = append(cur.([]any), v)
}

// MarshalJSON writes the keys in order.
func (o *obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// isNil reports xsi:nil="true".
func isNil(el *etree.Element) bool {
	for _, a := range el.Attr {
		if a.Key == "nil" && (a.Value == "true" || a.Value == "1") {
			return true
		}
	}
	return false
}

// xsiType returns the built-in named by xsi:type, if any.
func xsiType(el *etree.Element) string {
	for _, a := range el.Attr {
		if a.Key == "type" && a.Space != "" && a.Space != "xmlns" {
			if el.NamespaceURI() != "" || strings.Contains(a.Value, ":") {
				return local(a.Value)
			}
		}
	}
	return ""
}

// decode converts an element to JSON along its schema node (nil: none).
func decode(el *etree.Element, n *node) any {
	if isNil(el) {
		return nil
	}
	if n == nil || (n.Complex == nil && (n.Scalar == "" || n.Scalar == "anyType")) {
		return decodeUntyped(el)
	}
	if n.Complex == nil {
		t := n.Scalar
		if xt := xsiType(el); xt != "" && knownScalar(xt) {
			t = xt
		}
		return typed(t, el.Text())
	}
	c := n.Complex
	kids := el.ChildElements()
	if c.Array != nil {
		// A SOAP-encoded array: every child is an item, whatever its name.
		out := make([]any, 0, len(kids))
		for _, k := range kids {
			out = append(out, decode(k, c.Fields[0]))
		}
		return out
	}
	if len(kids) == 0 && c.Text != "" && len(c.Attrs) == 0 {
		return typed(c.Text, el.Text())
	}
	o := newObj()
	for _, a := range c.Attrs {
		for _, x := range el.Attr {
			if x.Key == a.Name && x.Space == "" {
				o.set(a.Name, typed(a.Scalar, x.Value))
			}
		}
	}
	if c.Text != "" && len(kids) == 0 {
		o.set("_", typed(c.Text, el.Text()))
		return o
	}
	for _, k := range kids {
		f := c.field(k.Tag)
		v := decode(k, f)
		if f != nil && f.repeated() {
			o.add(f.Name, v)
			continue
		}
		name := k.Tag
		if f != nil {
			name = f.Name
		}
		if cur, ok := o.vals[name]; ok && f == nil {
			if arr, isArr := cur.([]any); isArr {
				o.vals[name] = append(arr, v)
			} else {
				o.vals[name] = []any{cur, v}
			}
			continue
		}
		o.set(name, v)
	}
	if arrayWrapper(c) && len(o.keys) == 0 {
		o.set(c.Fields[0].Name, []any{})
	}
	return o
}

// decodeUntyped converts an element without a schema: text (typed by
// xsi:type when present), an encoded array (arrayType or all <item>), or
// an object whose repeated names become lists.
func decodeUntyped(el *etree.Element) any {
	if isNil(el) {
		return nil
	}
	kids := el.ChildElements()
	if len(kids) == 0 {
		if xt := xsiType(el); xt != "" && knownScalar(xt) {
			return typed(xt, el.Text())
		}
		return el.Text()
	}
	isArray := false
	for _, a := range el.Attr {
		if a.Key == "arrayType" || a.Key == "itemType" {
			isArray = true
		}
	}
	if !isArray && len(kids) > 1 {
		isArray = true
		for _, k := range kids {
			if k.Tag != "item" {
				isArray = false
				break
			}
		}
	}
	if isArray {
		out := make([]any, 0, len(kids))
		for _, k := range kids {
			out = append(out, decodeUntyped(k))
		}
		return out
	}
	o := newObj()
	for _, k := range kids {
		v := decodeUntyped(k)
		if cur, ok := o.vals[k.Tag]; ok {
			if arr, isArr := cur.([]any); isArr && o.multi(k.Tag) {
				o.vals[k.Tag] = append(arr, v)
			} else {
				o.vals[k.Tag] = []any{cur, v}
				o.markMulti(k.Tag)
			}
			continue
		}
		o.set(k.Tag, v)
	}
	return o
}

// multi reports whether k was made a list by repetition (a value that is
// itself a list must not be appended to).
func (o *obj) multi(k string) bool { return o.rep[k] }

func (o *obj) markMulti(k string) { o.rep[k] = true }

// typed converts a text to JSON by its built-in type; text that does not
// parse stays a string.
func typed(t, text string) any {
	s := strings.TrimSpace(text)
	switch scalarKind(t) {
	case kindInteger:
		if reInteger.MatchString(s) {
			if b, ok := new(big.Int).SetString(strings.TrimPrefix(s, "+"), 10); ok {
				return json.Number(b.String())
			}
		}
	case kindNumber:
		if f, err := strconv.ParseFloat(s, 64); err == nil && !isInfNaN(f) {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
	case kindBoolean:
		switch s {
		case "true", "1":
			return true
		case "false", "0":
			return false
		}
	}
	return text
}

func isInfNaN(f float64) bool {
	return f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308
}
