package soap

import (
	"strconv"
	"strings"

	"github.com/hooklift/gowsdl"
)

// node is an element of a message: its name, namespace, occurrence and
// type, resolved from the schema.
type node struct {
	// Name is the element's local name; NS its namespace ("" when
	// unqualified).
	Name, NS string
	// Min and Max are minOccurs and maxOccurs (-1: unbounded).
	Min, Max int
	// Nillable allows xsi:nil.
	Nillable bool
	// Scalar is the XSD built-in type of a simple element ("string",
	// "int", …); empty for complex elements.
	Scalar string
	// Complex is the content of a complex element.
	Complex *ctype
	// TypeName names the element's named complex type ("" for anonymous
	// ones), for the OpenAPI components and xsi:type; TypeNS is its
	// namespace.
	TypeName, TypeNS string
}

// repeated reports whether the element may occur more than once.
func (n *node) repeated() bool { return n.Max != 1 }

// ctype is a complex type's content: child elements in sequence order,
// the base type of simple content, and attributes.
type ctype struct {
	Fields []*node
	Text   string
	// Attrs are the type's attributes (its base type's first). In JSON
	// they are plain members next to the child elements, as PHP's
	// SoapClient maps them; simple content is the member "_".
	Attrs []*attr
	// Array is set for a SOAP-encoded array (a restriction of
	// soapenc:Array): the items' type. Fields then holds one repeated
	// "item" element of that type.
	Array *qname
}

// attr is an attribute of a complex type.
type attr struct {
	Name     string
	Scalar   string // its built-in base type
	Required bool
}

// attr finds an attribute by name, exactly then case-insensitively.
func (c *ctype) attr(name string) *attr {
	for _, a := range c.Attrs {
		if a.Name == name {
			return a
		}
	}
	for _, a := range c.Attrs {
		if strings.EqualFold(a.Name, name) {
			return a
		}
	}
	return nil
}

// field finds a child by local name.
func (c *ctype) field(name string) *node {
	for _, f := range c.Fields {
		if f.Name == name {
			return f
		}
	}
	for _, f := range c.Fields {
		if strings.EqualFold(f.Name, name) {
			return f
		}
	}
	return nil
}

type decl[T any] struct {
	v T
	s *gowsdl.XSDSchema
}

// schemaSet indexes the global declarations of every schema of a WSDL.
type schemaSet struct {
	elements map[qname]decl[*gowsdl.XSDElement]
	complex  map[qname]decl[*gowsdl.XSDComplexType]
	simple   map[qname]decl[*gowsdl.XSDSimpleType]
	built    map[qname]*ctype
	names    map[string]*ctype // named complex types, for documents
	// arrays are the SOAP-encoded array types (restrictions of
	// soapenc:Array, which gowsdl does not model) and their item types.
	arrays map[qname]qname
	// nsOf gives a named complex type's namespace, by local name.
	nsOf map[string]string
}

func newSchemaSet() *schemaSet {
	return &schemaSet{
		elements: map[qname]decl[*gowsdl.XSDElement]{},
		complex:  map[qname]decl[*gowsdl.XSDComplexType]{},
		simple:   map[qname]decl[*gowsdl.XSDSimpleType]{},
		built:    map[qname]*ctype{},
		names:    map[string]*ctype{},
		arrays:   map[qname]qname{},
		nsOf:     map[string]string{},
	}
}

func (s *schemaSet) add(x *gowsdl.XSDSchema) {
	ns := x.TargetNamespace
	for _, e := range x.Elements {
		if _, ok := s.elements[qname{ns, e.Name}]; !ok {
			s.elements[qname{ns, e.Name}] = decl[*gowsdl.XSDElement]{e, x}
		}
	}
	for _, c := range x.ComplexTypes {
		if _, ok := s.complex[qname{ns, c.Name}]; !ok {
			s.complex[qname{ns, c.Name}] = decl[*gowsdl.XSDComplexType]{c, x}
		}
	}
	for _, t := range x.SimpleType {
		if _, ok := s.simple[qname{ns, t.Name}]; !ok {
			s.simple[qname{ns, t.Name}] = decl[*gowsdl.XSDSimpleType]{t, x}
		}
	}
}

// find looks a name up exactly, then by local name alone (schemas whose
// prefixes do not resolve, default namespaces gowsdl does not record).
func find[T any](m map[qname]decl[T], q qname) (decl[T], bool) {
	if d, ok := m[q]; ok {
		return d, true
	}
	for k, d := range m {
		if k.Local == q.Local {
			return d, true
		}
	}
	var zero decl[T]
	return zero, false
}

// builtin reports whether q is an XSD (or SOAP encoding) built-in type and
// returns its local name.
func builtin(q qname) bool {
	switch q.Space {
	case nsXSD, "http://www.w3.org/1999/XMLSchema", "http://www.w3.org/2000/10/XMLSchema", nsSOAPEnc, nsSOAP12En:
		return true
	}
	return false
}

// xmlnsOf returns the schema's prefixes (the default namespace is the
// target namespace when not declared).
func xmlnsOf(x *gowsdl.XSDSchema) map[string]string {
	if x == nil {
		return nil
	}
	if _, ok := x.Xmlns[""]; !ok {
		x.Xmlns[""] = x.TargetNamespace
	}
	return x.Xmlns
}

// globalElement builds the node of a global element.
func (s *schemaSet) globalElement(q qname) *node {
	d, ok := find(s.elements, q)
	if !ok {
		return nil
	}
	n := s.element(d.v, d.s, true, 0)
	n.Min, n.Max = 1, 1
	return n
}

// maxDepth bounds ref chains and anonymous nesting.
const maxDepth = 64

// element builds the node of an element declared in schema x.
func (s *schemaSet) element(e *gowsdl.XSDElement, x *gowsdl.XSDSchema, global bool, depth int) *node {
	if e.Ref != "" && depth < maxDepth {
		q := resolveQName(e.Ref, xmlnsOf(x))
		if d, ok := find(s.elements, q); ok {
			n := s.element(d.v, d.s, true, depth+1)
			n.Min, n.Max = occurs(e.MinOccurs, 1), occurs(e.MaxOccurs, 1)
			n.Nillable = n.Nillable || e.Nillable
			return n
		}
		return &node{Name: local(e.Ref), Min: occurs(e.MinOccurs, 1), Max: occurs(e.MaxOccurs, 1), Scalar: "string"}
	}
	n := &node{Name: e.Name, Min: occurs(e.MinOccurs, 1), Max: occurs(e.MaxOccurs, 1), Nillable: e.Nillable}
	if global || x.ElementFormDefault == "qualified" {
		n.NS = x.TargetNamespace
	}
	switch {
	case e.ComplexType != nil && depth < maxDepth:
		n.Complex = s.content(e.ComplexType, x, depth+1)
	case e.SimpleType != nil:
		n.Scalar = s.simpleBase(e.SimpleType, x, 0)
	case e.Type != "":
		s.typeInto(n, resolveQName(e.Type, xmlnsOf(x)))
	default:
		n.Scalar = "anyType"
	}
	return n
}

// typeInto sets n's type from a type name.
func (s *schemaSet) typeInto(n *node, q qname) {
	if builtin(q) {
		n.Scalar = q.Local
		return
	}
	if d, ok := find(s.complex, q); ok {
		n.Complex = s.named(qname{d.s.TargetNamespace, d.v.Name}, d)
		n.TypeName, n.TypeNS = d.v.Name, d.s.TargetNamespace
		return
	}
	if d, ok := find(s.simple, q); ok {
		n.Scalar = s.simpleBase(d.v, d.s, 0)
		return
	}
	n.Scalar = q.Local
	if !knownScalar(q.Local) {
		n.Scalar = "string"
	}
}

// named builds a named complex type once; recursive types share it.
func (s *schemaSet) named(q qname, d decl[*gowsdl.XSDComplexType]) *ctype {
	if c, ok := s.built[q]; ok {
		return c
	}
	c := &ctype{}
	s.built[q] = c
	s.names[d.v.Name] = c
	s.nsOf[d.v.Name] = q.Space
	if item, ok := s.arrays[q]; ok {
		n := &node{Name: "item", Min: 0, Max: -1}
		s.typeInto(n, item)
		c.Fields, c.Array = []*node{n}, &item
		return c
	}
	*c = *s.content(d.v, d.s, 0)
	return c
}

// content builds a complex type's fields: its base type's first
// (complexContent extension), then sequence, all and choice elements.
func (s *schemaSet) content(t *gowsdl.XSDComplexType, x *gowsdl.XSDSchema, depth int) *ctype {
	c := &ctype{}
	if base := t.ComplexContent.Extension.Base; base != "" {
		q := resolveQName(base, xmlnsOf(x))
		if d, ok := find(s.complex, q); ok && !builtin(q) {
			b := s.named(qname{d.s.TargetNamespace, d.v.Name}, d)
			c.Fields = append(c.Fields, b.Fields...)
			c.Attrs = append(c.Attrs, b.Attrs...)
		}
		for _, a := range t.ComplexContent.Extension.Attributes {
			c.Attrs = append(c.Attrs, s.attribute(a, x))
		}
		for i := range t.ComplexContent.Extension.Sequence {
			c.Fields = append(c.Fields, s.element(&t.ComplexContent.Extension.Sequence[i], x, false, depth))
		}
		for _, e := range t.ComplexContent.Extension.Choice {
			f := s.element(e, x, false, depth)
			f.Min = 0
			c.Fields = append(c.Fields, f)
		}
	}
	if base := t.SimpleContent.Extension.Base; base != "" {
		n := &node{}
		s.typeInto(n, resolveQName(base, xmlnsOf(x)))
		c.Text = n.Scalar
		if c.Text == "" {
			c.Text = "string"
		}
		if n.Complex != nil { // simple content extending a complex type with simple content
			c.Text = n.Complex.Text
			c.Attrs = append(c.Attrs, n.Complex.Attrs...)
		}
		for _, a := range t.SimpleContent.Extension.Attributes {
			c.Attrs = append(c.Attrs, s.attribute(a, x))
		}
	}
	for _, a := range t.Attributes {
		c.Attrs = append(c.Attrs, s.attribute(a, x))
	}
	for _, e := range t.Sequence {
		c.Fields = append(c.Fields, s.element(e, x, false, depth))
	}
	for _, e := range t.All {
		c.Fields = append(c.Fields, s.element(e, x, false, depth))
	}
	for _, list := range [][]*gowsdl.XSDElement{t.Choice, t.SequenceChoice} {
		for _, e := range list {
			f := s.element(e, x, false, depth)
			f.Min = 0
			c.Fields = append(c.Fields, f)
		}
	}
	return c
}

// attribute builds an attribute declared in schema x.
func (s *schemaSet) attribute(a *gowsdl.XSDAttribute, x *gowsdl.XSDSchema) *attr {
	out := &attr{Name: a.Name, Scalar: "string", Required: a.Use == "required" && a.Fixed == ""}
	if out.Name == "" {
		out.Name = local(a.Ref)
	}
	switch {
	case a.SimpleType != nil:
		out.Scalar = s.simpleBase(a.SimpleType, x, 0)
	case a.Type != "":
		n := &node{}
		s.typeInto(n, resolveQName(a.Type, xmlnsOf(x)))
		if n.Scalar != "" {
			out.Scalar = n.Scalar
		}
	}
	return out
}

// simpleBase follows a simple type's restrictions to its built-in base.
func (s *schemaSet) simpleBase(t *gowsdl.XSDSimpleType, x *gowsdl.XSDSchema, depth int) string {
	if t.List.ItemType != "" || t.List.SimpleType != nil || t.Union.MemberTypes != "" || len(t.Union.SimpleType) > 0 {
		return "string"
	}
	if t.Restriction.Base == "" || depth > maxDepth {
		return "string"
	}
	q := resolveQName(t.Restriction.Base, xmlnsOf(x))
	if builtin(q) {
		return q.Local
	}
	if d, ok := find(s.simple, q); ok {
		return s.simpleBase(d.v, d.s, depth+1)
	}
	return "string"
}

// occurs reads minOccurs/maxOccurs.
func occurs(s string, def int) int {
	switch s {
	case "":
		return def
	case "unbounded":
		return -1
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}

// Kinds of built-in scalars, for JSON typing.
const (
	kindString = iota
	kindInteger
	kindNumber
	kindBoolean
)

// scalarKind classifies a built-in type.
func scalarKind(t string) int {
	switch t {
	case "int", "integer", "long", "short", "byte", "nonNegativeInteger", "nonPositiveInteger",
		"negativeInteger", "positiveInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte":
		return kindInteger
	case "float", "double", "decimal":
		return kindNumber
	case "boolean":
		return kindBoolean
	}
	return kindString
}

// knownScalar lists the XSD built-ins a type name without a resolvable
// prefix may still mean.
func knownScalar(t string) bool {
	if scalarKind(t) != kindString {
		return true
	}
	switch t {
	case "string", "normalizedString", "token", "base64Binary", "hexBinary", "dateTime", "date", "time",
		"duration", "anyURI", "QName", "anyType", "anySimpleType", "NMTOKEN", "Name", "NCName", "ID", "IDREF",
		"language", "gYear", "gYearMonth", "gMonth", "gMonthDay", "gDay":
		return true
	}
	return false
}
