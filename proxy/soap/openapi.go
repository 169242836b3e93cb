package soap

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

var _ service.Documenter = (*Backend)(nil)

// OpenAPI documents the service from its WSDL: the operation list at the
// root and, per operation, POST /{operation} (lowercase, underscores
// removed) with the request and response schemas of its messages, and GET
// with its scalar parameters in the query string. Named XSD complex types
// become components.
func (b *Backend) OpenAPI(ctx context.Context) (*openapi3.T, error) {
	d, err := b.Definitions(ctx)
	if err != nil {
		return nil, b.classify(err, context.Background())
	}
	doc := service.NewDocument("Operations of a SOAP service, described by its WSDL, called with JSON.")
	g := &docGen{doc: doc, names: map[*ctype]string{}, used: map[string]bool{}}

	list := service.NewOperation("list"+b.set.Name+"Operations", "", "List the service's operations.",
		"Every operation of the WSDL's binding, by name. refresh=true reads the WSDL again.")
	list.AddParameter(service.QueryParam("refresh", "Read the WSDL again before answering.", openapi3.NewBoolSchema()).Value)
	list.AddParameter(service.QueryParam("fields", "* adds description, action, style and access.", openapi3.NewStringSchema()).Value)
	list.AddParameter(service.QueryParam("as_access_list", "Answer the components a role's access may name: \"\", \"*\" and each operation.", openapi3.NewBoolSchema()).Value)
	service.AddResponse(list, http.StatusOK, "The operations.", service.SchemaRef(service.SchemaResourceList))
	service.AddErrors(list, append(service.CommonErrors, http.StatusServiceUnavailable)...)
	service.AddOperation(doc, "/", http.MethodGet, list)

	for _, op := range d.Operations {
		path := "/" + pathName(op.Name)
		req := g.request(op)
		res := g.response(op)
		desc := op.Doc
		if desc == "" {
			desc = fmt.Sprintf("Calls the SOAP operation %s.", op.Name)
		}
		post := service.NewOperation(b.set.Name+"Post"+op.Name, "", "Call "+op.Name+".", desc)
		post.RequestBody = service.JSONBody("The operation's parameters.", false, req)
		service.AddResponse(post, http.StatusOK, "The operation's result.", res)
		service.AddErrors(post, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
		service.AddOperation(doc, path, http.MethodPost, post)

		get := service.NewOperation(b.set.Name+"Get"+op.Name, "", "Call "+op.Name+" with query parameters.", desc)
		for _, f := range g.queryFields(op) {
			get.AddParameter(service.QueryParam(f.Name, "", g.scalar(f.Scalar)).Value)
		}
		service.AddResponse(get, http.StatusOK, "The operation's result.", res)
		service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
		service.AddOperation(doc, path, http.MethodGet, get)
	}
	return doc, nil
}

// pathName is an operation's documented path segment: lowercase, without
// underscores (Lookup accepts it).
func pathName(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", ""))
}

// docGen turns schema nodes into OpenAPI schemas.
type docGen struct {
	doc   *openapi3.T
	names map[*ctype]string
	used  map[string]bool
}

var componentChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// component returns the reference of a named complex type, defining it
// on first use.
func (g *docGen) component(name string, c *ctype) *openapi3.SchemaRef {
	if n, ok := g.names[c]; ok {
		return service.SchemaRef(n)
	}
	n := "soap." + componentChars.ReplaceAllString(name, "_")
	for i := 2; g.used[n] || service.SharedComponent(n); i++ {
		n = fmt.Sprintf("soap.%s_%d", componentChars.ReplaceAllString(name, "_"), i)
	}
	g.names[c], g.used[n] = n, true
	g.doc.Components.Schemas[n] = openapi3.NewSchemaRef("", g.object(c))
	return service.SchemaRef(n)
}

// object is the schema of a complex type's content.
func (g *docGen) object(c *ctype) *openapi3.Schema {
	if len(c.Fields) == 0 && c.Text != "" && len(c.Attrs) == 0 {
		return g.scalar(c.Text)
	}
	if c.Array != nil {
		// A SOAP-encoded array is a JSON list of its items.
		arr := openapi3.NewArraySchema()
		arr.Items = g.field(&node{Name: "item", Min: 1, Max: 1, Scalar: c.Fields[0].Scalar, Complex: c.Fields[0].Complex, TypeName: c.Fields[0].TypeName})
		return arr
	}
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{}
	for _, a := range c.Attrs {
		p := g.scalar(a.Scalar)
		p.Description = "attribute"
		s.Properties[a.Name] = openapi3.NewSchemaRef("", p)
		if a.Required {
			s.Required = append(s.Required, a.Name)
		}
	}
	if c.Text != "" {
		p := g.scalar(c.Text)
		p.Description = "the element's text"
		s.Properties["_"] = openapi3.NewSchemaRef("", p)
	}
	for _, f := range c.Fields {
		s.Properties[f.Name] = g.field(f)
		if f.Min > 0 && !f.repeated() && !f.Nillable {
			s.Required = append(s.Required, f.Name)
		}
	}
	return s
}

// field is the schema of an element, a list when it repeats.
func (g *docGen) field(f *node) *openapi3.SchemaRef {
	var one *openapi3.SchemaRef
	switch {
	case f.Complex != nil && f.TypeName != "":
		one = g.component(f.TypeName, f.Complex)
	case f.Complex != nil:
		one = openapi3.NewSchemaRef("", g.object(f.Complex))
	default:
		s := g.scalar(f.Scalar)
		s.Nullable = f.Nillable
		one = openapi3.NewSchemaRef("", s)
	}
	if f.repeated() {
		arr := openapi3.NewArraySchema()
		arr.Items = one
		return openapi3.NewSchemaRef("", arr)
	}
	return one
}

// scalar is the schema of an XSD built-in.
func (g *docGen) scalar(t string) *openapi3.Schema {
	switch scalarKind(t) {
	case kindInteger:
		s := openapi3.NewIntegerSchema()
		switch t {
		case "int", "short", "byte", "unsignedShort", "unsignedByte":
			s.Format = "int32"
		default:
			s.Format = "int64"
		}
		if strings.HasPrefix(t, "unsigned") || t == "nonNegativeInteger" {
			s = s.WithMin(0)
		}
		return s
	case kindNumber:
		s := openapi3.NewFloat64Schema()
		if t == "float" {
			s.Format = "float"
		} else if t == "double" {
			s.Format = "double"
		}
		return s
	case kindBoolean:
		return openapi3.NewBoolSchema()
	}
	s := openapi3.NewStringSchema()
	switch t {
	case "dateTime":
		s.Format = "date-time"
	case "date":
		s.Format = "date"
	case "base64Binary":
		s.Format = "byte"
	case "anyType":
		return &openapi3.Schema{}
	}
	return s
}

// inputFields are the fields of an operation's argument object.
func inputFields(op *Operation) []*node {
	if !op.RPC && len(op.Input) == 1 && op.Input[0].Complex != nil {
		return op.Input[0].Complex.Fields
	}
	return op.Input
}

// request is the schema of the JSON argument object.
func (g *docGen) request(op *Operation) *openapi3.SchemaRef {
	return openapi3.NewSchemaRef("", g.object(&ctype{Fields: inputFields(op)}))
}

// queryFields are the input fields a query string can carry (scalars).
func (g *docGen) queryFields(op *Operation) []*node {
	var out []*node
	for _, f := range inputFields(op) {
		if f.Complex == nil {
			out = append(out, f)
		}
	}
	return out
}

// response is the schema of the result, shaped as result() shapes it.
func (g *docGen) response(op *Operation) *openapi3.SchemaRef {
	wrap := func(name string, f *node) *openapi3.SchemaRef {
		s := openapi3.NewObjectSchema()
		s.Properties = openapi3.Schemas{name: g.field(f)}
		return openapi3.NewSchemaRef("", s)
	}
	switch {
	case op.RPC && len(op.Output) == 1:
		return wrap(op.Name+"Result", op.Output[0])
	case op.RPC:
		return openapi3.NewSchemaRef("", g.object(&ctype{Fields: op.Output}))
	case len(op.Output) == 0:
		return openapi3.NewSchemaRef("", openapi3.NewObjectSchema())
	case len(op.Output) == 1 && op.Output[0].Complex != nil:
		out := op.Output[0]
		if out.TypeName != "" {
			return g.component(out.TypeName, out.Complex)
		}
		return openapi3.NewSchemaRef("", g.object(out.Complex))
	case len(op.Output) == 1:
		return wrap(op.Name+"Result", op.Output[0])
	}
	s := openapi3.NewObjectSchema()
	s.Properties = openapi3.Schemas{}
	for _, p := range op.Output {
		s.Properties[p.Name] = g.field(p)
	}
	return openapi3.NewSchemaRef("", s)
}
