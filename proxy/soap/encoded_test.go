package soap_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/portcullis-dev/portcullis/proxy/soap"
)

// TestAttributes writes XSD attributes from plain JSON members (PHP
// SoapClient's mapping; "_" is simple content) and reads them back typed.
func TestAttributes(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/shop.wsdl"}, soap.Settings{Name: "shop"})
	got := call(t, b, "POST", "Quote", `{"item":[{"sku":"A1","qty":2,"gift":true,"name":"Pen","price":{"_":"1.5","currency":"EUR"}},
		{"sku":"B2","name":"Ink","price":{"_":3,"currency":"EUR"}}]}`)
	want(t, got, 200, `{"total":{"currency":"EUR","_":6},"item":[`+
		`{"sku":"A1","qty":2,"gift":true,"name":"Pen","price":{"currency":"EUR","_":1.5}},`+
		`{"sku":"B2","qty":1,"gift":false,"name":"Ink","price":{"currency":"EUR","_":3}}]}`)
	for _, frag := range []string{
		`<Quote xmlns="urn:shop"><item sku="A1" qty="2" gift="true"><name>Pen</name><price currency="EUR">1.5</price></item>`,
		`<item sku="B2"><name>Ink</name><price currency="EUR">3</price></item>`,
	} {
		if !strings.Contains(srv.last().Body, frag) {
			t.Errorf("request lacks %s:\n%s", frag, srv.last().Body)
		}
	}
	for _, tc := range []struct{ body, msg string }{
		{`{"item":[{"name":"Pen","price":{"_":1,"currency":"EUR"}}]}`, `Attribute 'item.sku' is required.`},
		{`{"item":[{"sku":"A","qty":"x","name":"Pen","price":{"_":1,"currency":"EUR"}}]}`, `Attribute 'item.qty': "x" is not an integer.`},
		{`{"item":[{"sku":"A","colour":"red","name":"Pen","price":{"_":1,"currency":"EUR"}}]}`, `'item' has no field colour.`},
		{`{"item":[{"sku":"A","name":"Pen","price":{"_":1}}]}`, `Attribute 'item.price.currency' is required.`},
	} {
		got := call(t, b, "POST", "Quote", tc.body)
		if got.status != 400 || got.message(t) != tc.msg {
			t.Errorf("%s: got %d %q, want 400 %q", tc.body, got.status, got.message(t), tc.msg)
		}
	}
	doc := document(t, b)
	price := doc.Components.Schemas["soap.Price"].Value
	if price == nil || price.Properties["currency"] == nil || price.Properties["_"] == nil || price.Required[0] != "currency" {
		t.Errorf("soap.Price = %+v", price)
	}
}

// TestSoapVar passes typed values with DreamFactory's soapvar: a derived
// type (xsi:type and its own fields), a scalar with its XSD type, raw
// XML, and errors.
func TestSoapVar(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/shop.wsdl"}, soap.Settings{Name: "shop"})
	for _, tc := range []struct{ name, body, result string }{
		{"object by name", `{"pet":{"soapvar":{"data":{"name":"Rex","breed":"Lab"},"encoding":"SOAP_ENC_OBJECT","type_name":"Dog","type_namespace":"urn:shop"}},
			"age":{"soapvar":{"data":3,"encoding":"XSD_INT","type_name":"xsd:int"}}}`, "{urn:shop}Dog Rex Lab xsd:int=3"},
		{"object by number, type prefixed", `{"pet":{"soapvar":{"data":{"name":"Rex","breed":"Lab"},"encoding":301,"type_name":"tns:Dog"}}}`, "{urn:shop}Dog Rex Lab "},
		{"encoding guessed", `{"pet":{"soapvar":{"data":{"name":"Rex","breed":"Lab"},"type_name":"Dog","type_namespace":"urn:shop"}},
			"age":{"soapvar":{"data":2.5,"type_name":"double","type_namespace":"http://www.w3.org/2001/XMLSchema"}}}`, "{urn:shop}Dog Rex Lab xsd:double=2.5"},
		{"raw XML", `{"pet":{"name":"Tom"},"age":{"soapvar":{"data":"<age xmlns=\"urn:shop\">7</age>","encoding":"XSD_ANYXML"}}}`, " Tom  =7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := call(t, b, "POST", "Adopt", tc.body)
			want(t, got, 200, `{"AdoptResult":"`+tc.result+`"}`)
		})
	}
	if !strings.Contains(srv.last().Body, `<age xmlns="urn:shop">7</age>`) {
		t.Errorf("raw XML not written as it is: %s", srv.last().Body)
	}
	for _, tc := range []struct{ body, msg string }{
		{`{"pet":{"name":"Rex","breed":"Lab"}}`, `'pet' has no field breed.`},
		{`{"pet":{"soapvar":{"data":{"name":"Rex"},"encoding":"XSD_NOPE"}}}`, `Field 'pet': soapvar encoding "XSD_NOPE" is not a SOAP_ENC_* or XSD_* constant.`},
		{`{"pet":{"soapvar":{"data":"x","encoding":"SOAP_ENC_OBJECT","type_name":"Dog"}}}`, `Field 'pet': soapvar data of encoding SOAP_ENC_OBJECT must be an object.`},
		{`{"pet":{"name":"Rex"},"age":{"soapvar":{"data":"old","encoding":"XSD_INT"}}}`, `Field 'age': "old" is not an integer.`},
	} {
		got := call(t, b, "POST", "Adopt", tc.body)
		if got.status != 400 || got.message(t) != tc.msg {
			t.Errorf("%s: got %d %q, want 400 %q", tc.body, got.status, got.message(t), tc.msg)
		}
	}
}

// TestEncodedArrays sends soapenc:Array arguments in rpc/encoded calls
// (arrayType with the item type and count, items typed) and reads an
// encoded array back as a JSON list.
func TestEncodedArrays(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/legacy.wsdl"}, soap.Settings{Name: "legacy"})
	want(t, call(t, b, "POST", "join", `{"words":["a","b","c"],"sep":"-"}`), 200,
		`{"joinResult":"a(xsd:string)-b(xsd:string)-c(xsd:string) xsd:string[3]"}`)
	want(t, call(t, b, "POST", "join", `{"words":{"soapvar":{"data":["p","q"],"encoding":"SOAP_ENC_ARRAY"}},"sep":"+"}`), 200,
		`{"joinResult":"p(xsd:string)+q(xsd:string) xsd:string[2]"}`)
	want(t, call(t, b, "POST", "join", `{"words":[],"sep":"+"}`), 200, `{"joinResult":" xsd:string[0]"}`)

	want(t, call(t, b, "POST", "sum", `{"pairs":[{"key":"x","value":2},{"key":"y","value":5}]}`), 200, `{"total":7,"keys":["x","y"]}`)
	body := srv.last().Body
	for _, frag := range []string{
		`xmlns:ns1="urn:legacy"><soap:Body>`,
		`<pairs xsi:type="soapenc:Array" xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" soapenc:arrayType="ns1:Pair[2]">`,
		`<item xsi:type="ns1:Pair"><key xsi:type="xsd:string">x</key><value xsi:type="xsd:int">2</value></item>`,
	} {
		if !strings.Contains(body, frag) {
			t.Errorf("request lacks %s:\n%s", frag, body)
		}
	}
	got := call(t, b, "POST", "sum", `{"pairs":[{"key":"x","value":"two"}]}`)
	if got.status != 400 || !strings.Contains(got.message(t), `"two" is not an integer`) {
		t.Errorf("bad item: %d %s", got.status, got.body)
	}
	document(t, b)
}

// TestMTOM reads an MTOM/XOP answer: the part an xop:Include names comes
// back as base64 in the JSON.
func TestMTOM(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/shop.wsdl"}, soap.Settings{Name: "shop"})
	want(t, call(t, b, "POST", "GetDocument", `{"id":"report"}`), 200,
		`{"name":"report.bin","content":"`+base64.StdEncoding.EncodeToString(mtomBytes)+`"}`)
}

// TestAccessList answers as_access_list as other services do.
func TestAccessList(t *testing.T) {
	srv := newTestServer(t)
	b := backend(t, map[string]any{"wsdl": srv.URL + "/calc.wsdl"}, soap.Settings{})
	want(t, call(t, b, "GET", "?as_access_list=true", ""), 200, `{"resource":["","*","Add","Divide","EchoPerson","Slow"]}`)
}
