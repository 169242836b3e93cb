// Package soap is the soap service type: the operations of a SOAP service,
// described by its WSDL, served as REST endpoints.
//
// GET /{service} lists the operations; POST /{service}/{operation} with a
// JSON object (or GET with the query string) calls one. The request is
// mapped onto the operation's input message along the WSDL's XSD types
// (element order, namespaces, arrays, nillable elements) in a SOAP 1.1 or
// 1.2 envelope, document/literal or rpc/encoded as the binding says, and
// the answer comes back as JSON typed from the schema. XSD attributes are
// plain JSON members next to the child elements (simple content is "_"),
// as PHP's SoapClient maps them; DreamFactory's "soapvar" objects give a
// value its own xsi:type, encoding and element name; rpc/encoded arrays
// are JSON lists sent as soapenc:Array; MTOM/XOP answers are read, their
// included parts as base64. Faults become 500
// with the fault text and code; an upstream that is down or slow becomes
// 503 or 504. Every outbound connection (WSDL, imported schemas, calls)
// goes through the platform's upstream allow list.
//
// The WSDL model is gowsdl's; the envelope, headers (generic and WSSE
// UsernameToken), faults and JSON conversion are this package's own, on
// etree and encoding/xml.
package soap
