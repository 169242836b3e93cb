package soap_test

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"
)

// testServer is a SOAP server for the fixtures: it serves the WSDLs and
// schemas of testdata/ (with {{URL}} replaced by its own address) and
// answers the operations of calc.wsdl (1.1 and 1.2) and rpc.wsdl.
type testServer struct {
	*httptest.Server
	t testing.TB
	// noRecord keeps no requests (benchmarks).
	noRecord bool

	mu       sync.Mutex
	requests []*recorded
	wsdlHits int
	// wssePassword, when set, is the password the WSSE digest must match.
	wssePassword string
	// basic, when set, is the "user:password" every request must carry.
	basic string
}

// recorded is one call the server saw.
type recorded struct {
	Header http.Header
	Body   string
	Doc    *etree.Document
}

func newTestServer(t testing.TB) *testServer {
	s := &testServer{t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

func (s *testServer) last() *recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		s.t.Fatal("the SOAP server saw no call")
	}
	return s.requests[len(s.requests)-1]
}

func (s *testServer) handle(w http.ResponseWriter, r *http.Request) {
	if s.basic != "" {
		u, p, ok := r.BasicAuth()
		if !ok || u+":"+p != s.basic {
			w.Header().Set("WWW-Authenticate", `Basic realm="soap"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if r.Method == http.MethodGet {
		s.mu.Lock()
		s.wsdlHits++
		s.mu.Unlock()
		data, err := os.ReadFile("testdata/" + strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		_, _ = io.WriteString(w, strings.ReplaceAll(string(data), "{{URL}}", s.URL))
		return
	}
	body, _ := io.ReadAll(r.Body)
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(body); err != nil {
		http.Error(w, "bad xml", http.StatusBadRequest)
		return
	}
	if !s.noRecord {
		s.mu.Lock()
		s.requests = append(s.requests, &recorded{Header: r.Header.Clone(), Body: string(body), Doc: doc})
		s.mu.Unlock()
	}
	env := doc.Root()
	v12 := env.NamespaceURI() == "http://www.w3.org/2003/05/soap-envelope"
	reply := func(status int, inner string) {
		ns, ct := "http://schemas.xmlsoap.org/soap/envelope/", "text/xml; charset=utf-8"
		if v12 {
			ns, ct = "http://www.w3.org/2003/05/soap-envelope", "application/soap+xml; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		fmt.Fprintf(w, `<?xml version="1.0"?><e:Envelope xmlns:e="%s" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"><e:Body>%s</e:Body></e:Envelope>`, ns, inner)
	}
	fault := func(code, text string) {
		if v12 {
			reply(http.StatusInternalServerError, `<e:Fault><e:Code><e:Value>e:`+code+`</e:Value></e:Code><e:Reason><e:Text xml:lang="en">`+text+`</e:Text></e:Reason></e:Fault>`)
			return
		}
		reply(http.StatusInternalServerError, `<e:Fault><faultcode>e:`+code+`</faultcode><faultstring>`+text+`</faultstring><detail><why>`+text+`</why></detail></e:Fault>`)
	}
	if s.wssePassword != "" {
		if msg := checkWSSE(env, s.wssePassword); msg != "" {
			fault("Client", msg)
			return
		}
	}
	bodyEl := env.FindElement("Body")
	if bodyEl == nil || len(bodyEl.ChildElements()) == 0 {
		fault("Client", "no body")
		return
	}
	call := bodyEl.ChildElements()[0]
	text := func(path string) string {
		if el := call.FindElement(path); el != nil {
			return el.Text()
		}
		return ""
	}
	const calc = `xmlns="http://example.org/calc"`
	switch {
	case call.Tag == "Add" && call.NamespaceURI() == "http://example.org/calc":
		a, err1 := strconv.Atoi(text("a"))
		b, err2 := strconv.Atoi(text("b"))
		if err1 != nil || err2 != nil {
			fault("Client", "a and b must be integers")
			return
		}
		reply(http.StatusOK, fmt.Sprintf(`<AddResponse %s><AddResult>%d</AddResult></AddResponse>`, calc, a+b))
	case call.Tag == "Divide":
		a, _ := strconv.ParseFloat(text("dividend"), 64)
		b, _ := strconv.ParseFloat(text("divisor"), 64)
		if b == 0 {
			fault("Server", "Division by zero")
			return
		}
		reply(http.StatusOK, fmt.Sprintf(`<DivideResponse %s><DivideResult>%g</DivideResult></DivideResponse>`, calc, a/b))
	case call.Tag == "EchoPerson":
		person := call.FindElement("person")
		inner := ""
		if person != nil {
			d := etree.NewDocument()
			for _, c := range person.ChildElements() {
				d.AddChild(c.Copy())
			}
			inner, _ = d.WriteToString()
		}
		note := `<note xsi:nil="true"/>`
		if n := call.FindElement("note"); n != nil && n.SelectAttrValue("xsi:nil", "") != "true" {
			note = "<note>" + n.Text() + "</note>"
		}
		reply(http.StatusOK, `<EchoPersonResponse `+calc+`><EchoPersonResult xmlns:p="http://example.org/people">`+
			strings.ReplaceAll(inner, "xmlns=\"http://example.org/people\"", "")+`</EchoPersonResult>`+note+`</EchoPersonResponse>`)
	case call.Tag == "Slow":
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
			return
		}
		reply(http.StatusOK, `<SlowResponse `+calc+`><SlowResult>true</SlowResult></SlowResponse>`)
	case call.Tag == "multiply" && call.NamespaceURI() == "urn:math":
		x, _ := strconv.Atoi(text("x"))
		y, _ := strconv.ParseFloat(text("y"), 64)
		reply(http.StatusOK, fmt.Sprintf(`<m:multiplyResponse xmlns:m="urn:math"><return xsi:type="xsd:double">%g</return></m:multiplyResponse>`, float64(x)*y))
	case call.Tag == "stats":
		reply(http.StatusOK, `<m:statsResponse xmlns:m="urn:math"><count xsi:type="xsd:int">`+strconv.Itoa(len(text("label")))+`</count><ok xsi:type="xsd:boolean">1</ok></m:statsResponse>`)
	case call.Tag == "Quote" && call.NamespaceURI() == "urn:shop":
		total, currency, echo := 0.0, "", ""
		for _, it := range call.SelectElements("item") {
			sku := it.SelectAttrValue("sku", "")
			if sku == "" {
				fault("Client", "an item has no sku")
				return
			}
			qty, err := strconv.Atoi(it.SelectAttrValue("qty", "1"))
			price := it.FindElement("price")
			if err != nil || price == nil {
				fault("Client", "bad item "+sku)
				return
			}
			p, _ := strconv.ParseFloat(price.Text(), 64)
			total += p * float64(qty)
			currency = price.SelectAttrValue("currency", "")
			echo += fmt.Sprintf(`<item sku="%s" qty="%d" gift="%s"><name>%s</name><price currency="%s">%s</price></item>`,
				sku, qty, it.SelectAttrValue("gift", "false"), it.FindElement("name").Text(), currency, price.Text())
		}
		reply(http.StatusOK, fmt.Sprintf(`<QuoteResponse xmlns="urn:shop"><total currency="%s">%g</total>%s</QuoteResponse>`, currency, total, echo))
	case call.Tag == "Adopt" && call.NamespaceURI() == "urn:shop":
		pet := call.FindElement("pet")
		typ := ""
		if pet != nil {
			if a := pet.SelectAttr("xsi:type"); a != nil {
				prefix, name, _ := strings.Cut(a.Value, ":")
				typ = "{" + pet.NamespaceURI() + "}" + name
				for e := pet; e != nil; e = e.Parent() {
					if ns := e.SelectAttrValue("xmlns:"+prefix, ""); ns != "" {
						typ = "{" + ns + "}" + name
						break
					}
				}
			}
		}
		age := ""
		if a := call.FindElement("age"); a != nil {
			age = a.SelectAttrValue("xsi:type", "") + "=" + a.Text()
		}
		reply(http.StatusOK, `<AdoptResponse xmlns="urn:shop"><AdoptResult>`+typ+" "+text("pet/name")+" "+text("pet/breed")+" "+age+`</AdoptResult></AdoptResponse>`)
	case call.Tag == "GetDocument" && call.NamespaceURI() == "urn:shop":
		// An MTOM/XOP answer: the envelope in the root part, the bytes in
		// a part of their own.
		const boundary = "MIMEBoundary_test"
		w.Header().Set("Content-Type", `multipart/related; type="application/xop+xml"; boundary="`+boundary+`"; start="<root.message@example.org>"; start-info="text/xml"`)
		fmt.Fprintf(w, "--%s\r\nContent-Type: application/xop+xml; charset=UTF-8; type=\"text/xml\"\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <root.message@example.org>\r\n\r\n", boundary)
		fmt.Fprintf(w, `<?xml version="1.0"?><e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body><GetDocumentResponse xmlns="urn:shop"><name>%s.bin</name><content><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:doc1%%40example.org"/></content></GetDocumentResponse></e:Body></e:Envelope>`, text("id"))
		fmt.Fprintf(w, "\r\n--%s\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <doc1@example.org>\r\n\r\n", boundary)
		_, _ = w.Write(mtomBytes)
		fmt.Fprintf(w, "\r\n--%s--\r\n", boundary)
	case call.Tag == "join" && call.NamespaceURI() == "urn:legacy":
		words := call.FindElement("words")
		if words == nil || words.SelectAttrValue("xsi:type", "") != "soapenc:Array" {
			fault("Client", "words is not a SOAP array")
			return
		}
		var list []string
		for _, it := range words.ChildElements() {
			list = append(list, it.Text()+"("+it.SelectAttrValue("xsi:type", "")+")")
		}
		reply(http.StatusOK, `<m:joinResponse xmlns:m="urn:legacy"><return xsi:type="xsd:string">`+strings.Join(list, text("sep"))+
			" "+words.SelectAttrValue("soapenc:arrayType", "")+`</return></m:joinResponse>`)
	case call.Tag == "sum" && call.NamespaceURI() == "urn:legacy":
		pairs := call.FindElement("pairs")
		total, keys := 0, ""
		for _, it := range pairs.ChildElements() {
			v, _ := strconv.Atoi(it.FindElement("value").Text())
			total += v
			keys += `<item xsi:type="xsd:string">` + it.FindElement("key").Text() + `</item>`
		}
		reply(http.StatusOK, fmt.Sprintf(`<m:sumResponse xmlns:m="urn:legacy"><total xsi:type="xsd:int">%d</total>`+
			`<keys xmlns:soapenc="http://schemas.xmlsoap.org/soap/encoding/" xsi:type="soapenc:Array" soapenc:arrayType="xsd:string[%d]">%s</keys></m:sumResponse>`,
			total, len(pairs.ChildElements()), keys))
	default:
		fault("Client", "unknown operation "+call.Tag)
	}
}

// mtomBytes is the binary content of GetDocument's MTOM answer.
var mtomBytes = []byte{0x00, 0x01, 0xfe, 0xff, '\r', '\n', '-', '-', 'x'}

// checkWSSE verifies a UsernameToken's password digest.
func checkWSSE(env *etree.Element, password string) string {
	tok := env.FindElement("Header/Security/UsernameToken")
	if tok == nil {
		return "no UsernameToken"
	}
	get := func(name string) string {
		if el := tok.FindElement(name); el != nil {
			return el.Text()
		}
		return ""
	}
	nonce, err := base64.StdEncoding.DecodeString(get("Nonce"))
	if err != nil || len(nonce) == 0 {
		return "bad nonce"
	}
	h := sha1.New()
	h.Write(nonce)
	h.Write([]byte(get("Created")))
	h.Write([]byte(password))
	if base64.StdEncoding.EncodeToString(h.Sum(nil)) != get("Password") {
		return "The security token could not be authenticated"
	}
	return ""
}
