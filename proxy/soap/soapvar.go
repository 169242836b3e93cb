package soap

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/beevik/etree"
)

// PHP's SoapVar encodings (ext/soap constants), by number. A soapvar's
// encoding may be given by number or by constant name.
const (
	encArray  = 300 // SOAP_ENC_ARRAY
	encObject = 301 // SOAP_ENC_OBJECT
	encAnyXML = 147 // XSD_ANYXML
)

// xsdEncodings are the XSD_* constants and the built-in type each names.
var xsdEncodings = map[int]string{
	101: "string", 102: "boolean", 103: "decimal", 104: "float", 105: "double", 106: "duration",
	107: "dateTime", 108: "time", 109: "date", 110: "gYearMonth", 111: "gYear", 112: "gMonthDay",
	113: "gDay", 114: "gMonth", 115: "hexBinary", 116: "base64Binary", 117: "anyURI", 118: "QName",
	119: "NOTATION", 120: "normalizedString", 121: "token", 122: "language", 123: "NMTOKEN",
	124: "Name", 125: "NCName", 126: "ID", 127: "IDREF", 128: "IDREFS", 129: "ENTITY",
	130: "ENTITIES", 131: "integer", 132: "nonPositiveInteger", 133: "negativeInteger", 134: "long",
	135: "int", 136: "short", 137: "byte", 138: "nonNegativeInteger", 139: "unsignedLong",
	140: "unsignedInt", 141: "unsignedShort", 142: "unsignedByte", 143: "positiveInteger",
	144: "NMTOKENS", 145: "anyType",
}

// encodingNames maps the constants' names to their numbers.
var encodingNames = func() map[string]int {
	m := map[string]int{"SOAP_ENC_ARRAY": encArray, "SOAP_ENC_OBJECT": encObject, "XSD_ANYXML": encAnyXML}
	for n, t := range xsdEncodings {
		m["XSD_"+strings.ToUpper(t)] = n
	}
	return m
}()

// soapVarOf returns the soapvar object of v: v is an object with a key
// "soapvar" (any case) holding an object. As in DreamFactory, the soapvar
// stands for the whole object that holds it.
func soapVarOf(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	sv, ok := lookupArg(m, "soapvar")
	if !ok {
		return nil, false
	}
	svm, ok := sv.(map[string]any)
	return svm, ok
}

// soapVar writes DreamFactory's soapvar, PHP's SoapVar: {data, encoding,
// type_name, type_namespace, node_name, node_namespace}. node_name and
// node_namespace rename the element (default: the schema's); type_name
// (in type_namespace) becomes xsi:type and, when it names a complex type
// of the WSDL, the type data is written along (a derived type's own
// fields, say). encoding (a number or a constant name such as XSD_INT or
// SOAP_ENC_OBJECT; default from data's JSON type) says how data is
// written: a scalar of that XSD type, an object, a SOAP array, or
// (XSD_ANYXML) a string of XML written as it is in place of the element.
func (e *envelope) soapVar(parent *etree.Element, defNS string, f *node, sv map[string]any, encoded bool, path string) error {
	str := func(k string) string {
		v, _ := lookupArg(sv, k)
		s, _ := v.(string)
		return strings.TrimSpace(s)
	}
	data, _ := lookupArg(sv, "data")
	enc, err := soapVarEncoding(sv, data)
	if err != nil {
		return badInput("Field '%s': soapvar %v.", path, err)
	}
	if enc == encAnyXML {
		text, ok := data.(string)
		if !ok {
			return badInput("Field '%s': soapvar data of encoding XSD_ANYXML must be a string of XML.", path)
		}
		frag := etree.NewDocument()
		frag.ReadSettings.Permissive = true
		if err := frag.ReadFromString("<x>" + text + "</x>"); err != nil {
			return badInput("Field '%s': soapvar data is not XML: %v.", path, err)
		}
		for _, c := range frag.Root().Child {
			parent.AddChild(c)
		}
		return nil
	}

	n := *f // the element as the soapvar shapes it
	if name := str("node_name"); name != "" {
		n.Name = name
		if ns, ok := lookupArg(sv, "node_namespace"); ok {
			n.NS, _ = ns.(string)
		}
	}
	typeName, typeNS := str("type_name"), str("type_namespace")
	if typeName != "" {
		if _, l, ok := strings.Cut(typeName, ":"); ok && typeNS == "" {
			// "xsd:int", or a prefixed name of one of the WSDL's types
			typeName, typeNS = l, nsXSD
			if _, isComplex := e.types[l]; isComplex {
				typeNS = e.typeNS[l]
			}
		}
		if c, ok := e.types[typeName]; ok && (typeNS == "" || typeNS == e.typeNS[typeName]) {
			n.Complex, n.Scalar, n.TypeName, n.TypeNS = c, "", typeName, e.typeNS[typeName]
		} else if knownScalar(typeName) && (typeNS == "" || typeNS == nsXSD) {
			n.Complex, n.Scalar = nil, typeName
		}
	}
	el := newChild(parent, defNS, &n)
	if data == nil {
		el.CreateAttr("xsi:nil", "true")
		return nil
	}
	if typeName != "" {
		el.CreateAttr("xsi:type", e.prefixed(el, typeNS, typeName))
	}
	inner := ns(&n, defNS)
	switch enc {
	case encObject:
		obj, ok := data.(map[string]any)
		if !ok {
			return badInput("Field '%s': soapvar data of encoding SOAP_ENC_OBJECT must be an object.", path)
		}
		if n.Complex == nil {
			untyped(el, obj)
			return nil
		}
		return e.content(el, inner, n.Name, n.Complex, obj, encoded, path)
	case encArray:
		list, ok := data.([]any)
		if !ok {
			return badInput("Field '%s': soapvar data of encoding SOAP_ENC_ARRAY must be a list.", path)
		}
		c := n.Complex
		if c == nil || !arrayWrapper(c) {
			c = &ctype{Fields: []*node{{Name: "item", Max: -1, Scalar: "anyType"}}, Array: &qname{nsXSD, "anyType"}}
		}
		if c.Array != nil && typeName == "" && e.version != "1.2" {
			el.CreateAttr("xsi:type", "soapenc:Array")
		}
		if c.Array != nil {
			e.arraySize(el, c, len(list))
		}
		return e.member(el, inner, c.Fields[0], map[string]any{c.Fields[0].Name: list}, encoded)
	}
	scalar := xsdEncodings[enc]
	if typeName == "" && encoded {
		el.CreateAttr("xsi:type", "xsd:"+scalar)
	}
	text, err := scalarText(scalar, data)
	if err != nil {
		return badInput("Field '%s': %v.", path, err)
	}
	el.SetText(text)
	return nil
}

// arraySize writes a SOAP array's item type and size.
func (e *envelope) arraySize(el *etree.Element, c *ctype, size int) {
	item := e.prefixed(el, c.Array.Space, c.Array.Local)
	if e.version == "1.2" {
		el.CreateAttr("xmlns:enc", nsSOAP12En)
		el.CreateAttr("enc:itemType", item)
		el.CreateAttr("enc:arraySize", strconv.Itoa(size))
		return
	}
	el.CreateAttr("xmlns:soapenc", nsSOAPEnc)
	el.CreateAttr("soapenc:arrayType", item+"["+strconv.Itoa(size)+"]")
}

// soapVarEncoding reads a soapvar's encoding, or guesses it from data as
// DreamFactory does.
func soapVarEncoding(sv map[string]any, data any) (int, error) {
	raw, ok := lookupArg(sv, "encoding")
	if ok && raw != nil && raw != "" {
		var n int
		switch x := raw.(type) {
		case json.Number:
			i, err := strconv.Atoi(x.String())
			if err != nil {
				return 0, errBadEncoding(raw)
			}
			n = i
		case float64:
			n = int(x)
		case string:
			if i, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
				n = i
			} else if i, ok := encodingNames[strings.ToUpper(strings.TrimSpace(x))]; ok {
				n = i
			} else {
				return 0, errBadEncoding(raw)
			}
		default:
			return 0, errBadEncoding(raw)
		}
		if _, ok := xsdEncodings[n]; !ok && n != encArray && n != encObject && n != encAnyXML {
			return 0, errBadEncoding(raw)
		}
		return n, nil
	}
	switch x := data.(type) {
	case map[string]any:
		return encObject, nil
	case []any:
		return encArray, nil
	case bool:
		return 102, nil
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			return 105, nil
		}
		return 131, nil
	case float64:
		return 105, nil
	}
	return 101, nil
}

type encodingError struct{ v any }

func (e encodingError) Error() string {
	return "encoding " + strconv.Quote(strings.TrimSpace(toString(e.v))) + " is not a SOAP_ENC_* or XSD_* constant"
}

func errBadEncoding(v any) error { return encodingError{v} }

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	b, _ := json.Marshal(v)
	return string(b)
}
