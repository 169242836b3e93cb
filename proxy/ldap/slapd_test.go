package ldap_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goldap "github.com/go-ldap/ldap/v3"
)

// Directory layout every test slapd is seeded with.
const (
	suffix   = "dc=example,dc=org"
	rootDN   = "cn=admin," + suffix
	rootPW   = "root-secret"
	readerDN = "cn=reader," + suffix
	readerPW = "reader-secret"
	people   = "ou=people," + suffix
	groups   = "ou=groups," + suffix
	corp     = "ou=corp," + suffix
)

// adSchema gives OpenLDAP the three Active Directory attributes the
// adldap sign-in reads (Microsoft's OIDs) and an auxiliary class that
// carries them (OpenLDAP's experimental arc). Debian ships a full
// msuser.schema, but it defines some 900 names; three are enough here.
// memberOf is a plain user attribute in this schema, so slapd's memberof
// overlay must not be loaded with it.
const adSchema = `attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName'
	EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.656 NAME 'userPrincipalName'
	EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
	SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.2.102 NAME 'memberOf'
	EQUALITY distinguishedNameMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 )
objectclass ( 1.3.6.1.4.1.4203.666.11.99.1 NAME 'portcullisADUser' AUXILIARY
	MAY ( sAMAccountName $ userPrincipalName $ memberOf ) )
`

// slapd is an OpenLDAP server started for one test.
type slapd struct {
	// StartTLS is ldap://127.0.0.1:port, LDAPS ldaps://127.0.0.1:port.
	StartTLS, LDAPS string
	// CAPEM is the server's self-signed certificate, PEM.
	CAPEM string
	pool  *x509.CertPool
	cmd   *exec.Cmd
}

// startSlapd starts PORTCULLIS_TEST_SLAPD with a temporary slapd.conf on
// two ephemeral ports (plain for StartTLS, and LDAPS), a self-signed
// certificate for 127.0.0.1, and the seed entries; it
// stops it when the test ends.
func startSlapd(t *testing.T) *slapd {
	t.Helper()
	bin := os.Getenv("PORTCULLIS_TEST_SLAPD")
	if bin == "" {
		t.Skip("PORTCULLIS_TEST_SLAPD is not set: LDAP sign-in not tested against OpenLDAP (set it to /usr/sbin/slapd; Debian package slapd)")
	}
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert, key := write("cert.pem", certPEM), write("key.pem", keyPEM)
	schema := write("ad.schema", adSchema)
	if err := os.Mkdir(filepath.Join(dir, "db"), 0o700); err != nil {
		t.Fatal(err)
	}
	schemaDir := os.Getenv("PORTCULLIS_TEST_SLAPD_SCHEMA")
	if schemaDir == "" {
		schemaDir = "/etc/ldap/schema"
	}
	modDir := os.Getenv("PORTCULLIS_TEST_SLAPD_MODULES")
	if modDir == "" {
		modDir = "/usr/lib/ldap"
	}
	conf := write("slapd.conf", fmt.Sprintf(`include %[1]s/core.schema
include %[1]s/cosine.schema
include %[1]s/inetorgperson.schema
include %[1]s/nis.schema
include %[2]s
modulepath %[3]s
moduleload back_mdb
pidfile %[4]s/slapd.pid
TLSCertificateFile %[5]s
TLSCertificateKeyFile %[6]s
database mdb
maxsize 16777216
suffix "%[7]s"
rootdn "%[8]s"
rootpw %[9]s
directory %[4]s/db
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
`, schemaDir, schema, modDir, dir, cert, key, suffix, rootDN, rootPW))

	s := &slapd{CAPEM: certPEM, pool: x509.NewCertPool()}
	s.pool.AppendCertsFromPEM([]byte(certPEM))
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		plain, tlsPort := freePort(t), freePort(t)
		s.StartTLS = "ldap://127.0.0.1:" + plain
		s.LDAPS = "ldaps://127.0.0.1:" + tlsPort
		var out strings.Builder
		cmd := exec.Command(bin, "-f", conf, "-h", s.StartTLS+"/ "+s.LDAPS+"/", "-d", "0")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("start slapd: %v", err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		if lastErr = waitListening(exited, "127.0.0.1:"+plain, "127.0.0.1:"+tlsPort); lastErr == nil {
			s.cmd = cmd
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			break
		}
		_ = cmd.Process.Kill()
		<-exited
		lastErr = fmt.Errorf("%w; slapd said: %s", lastErr, out.String())
	}
	if s.cmd == nil {
		t.Fatalf("slapd did not start: %v", lastErr)
	}
	s.seed(t)
	return s
}

// waitListening waits until both addresses accept connections.
func waitListening(exited <-chan struct{}, addrs ...string) error {
	deadline := time.Now().Add(15 * time.Second)
	for _, a := range addrs {
		for {
			select {
			case <-exited:
				return fmt.Errorf("slapd exited")
			default:
			}
			c, err := net.DialTimeout("tcp", a, 200*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("slapd does not listen on %s", a)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// selfSigned returns a certificate for 127.0.0.1 (not localhost, which
// tests use as a name the certificate does not cover) and its key, PEM.
func selfSigned(t testing.TB) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "portcullis test slapd"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
}

// admin connects as the directory's root over LDAPS.
func (s *slapd) admin(t *testing.T) *goldap.Conn {
	t.Helper()
	c, err := goldap.DialURL(s.LDAPS, goldap.DialWithTLSConfig(&tls.Config{RootCAs: s.pool, ServerName: "127.0.0.1"}))
	if err != nil {
		t.Fatalf("dial slapd: %v", err)
	}
	if err := c.Bind(rootDN, rootPW); err != nil {
		c.Close()
		t.Fatalf("bind as root: %v", err)
	}
	return c
}

// seed adds the organisation, people, groups and an Active
// Directory-style user:
//
//   - alice (staff), bob (devs through memberUid), dave (no group);
//   - carol in ou=corp with sAMAccountName, userPrincipalName and
//     memberOf ad-admins;
//   - cn=reader, a service account.
func (s *slapd) seed(t *testing.T) {
	c := s.admin(t)
	defer c.Close()
	add := func(dn string, attrs map[string][]string) {
		req := goldap.NewAddRequest(dn, nil)
		for k, v := range attrs {
			req.Attribute(k, v)
		}
		if err := c.Add(req); err != nil {
			t.Fatalf("seed %s: %v", dn, err)
		}
	}
	add(suffix, map[string][]string{"objectClass": {"dcObject", "organization"}, "o": {"Example"}, "dc": {"example"}})
	add(readerDN, map[string][]string{"objectClass": {"organizationalRole", "simpleSecurityObject"}, "cn": {"reader"}, "userPassword": {readerPW}})
	for _, ou := range []string{"people", "groups", "corp"} {
		add("ou="+ou+","+suffix, map[string][]string{"objectClass": {"organizationalUnit"}, "ou": {ou}})
	}
	person := func(uid, given, sn, password string) map[string][]string {
		return map[string][]string{"objectClass": {"inetOrgPerson"}, "uid": {uid}, "cn": {given + " " + sn}, "givenName": {given},
			"sn": {sn}, "mail": {uid + "@example.org"}, "displayName": {given + " " + sn}, "userPassword": {password}}
	}
	add("uid=alice,"+people, person("alice", "Alice", "Liddell", "wonderland"))
	add("uid=bob,"+people, person("bob", "Bob", "Builder", "can-we-fix-it"))
	add("uid=dave,"+people, person("dave", "Dave", "Bowman", "open-the-pod-bay-doors"))
	add("cn=staff,"+groups, map[string][]string{"objectClass": {"groupOfNames"}, "cn": {"staff"}, "member": {"uid=alice," + people, readerDN}})
	add("cn=admins,"+groups, map[string][]string{"objectClass": {"groupOfNames"}, "cn": {"admins"}, "member": {readerDN}})
	add("cn=devs,"+groups, map[string][]string{"objectClass": {"posixGroup"}, "cn": {"devs"}, "gidNumber": {"5000"}, "memberUid": {"bob"}})
	add("cn=ad-admins,"+groups, map[string][]string{"objectClass": {"groupOfNames"}, "cn": {"ad-admins"}, "member": {"cn=Carol Danvers," + corp}})
	add("cn=Carol Danvers,"+corp, map[string][]string{"objectClass": {"inetOrgPerson", "portcullisADUser"}, "cn": {"Carol Danvers"},
		"givenName": {"Carol"}, "sn": {"Danvers"}, "mail": {"carol@corp.example.org"}, "displayName": {"Carol Danvers"},
		"sAMAccountName": {"carol"}, "userPrincipalName": {"carol@corp.example.org"}, "memberOf": {"cn=ad-admins," + groups},
		"userPassword": {"higher-further-faster"}})
}

// modify changes one entry as the directory's root.
func (s *slapd) modify(t *testing.T, dn string, change func(*goldap.ModifyRequest)) {
	t.Helper()
	c := s.admin(t)
	defer c.Close()
	req := goldap.NewModifyRequest(dn, nil)
	change(req)
	if err := c.Modify(req); err != nil {
		t.Fatalf("modify %s: %v", dn, err)
	}
}
