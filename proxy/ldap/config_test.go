package ldap

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseConfigHost(t *testing.T) {
	cases := []struct {
		kind, cfg        string
		addr, tls, uattr string
		err              string
	}{
		{TypeLDAP, `{"host":"ldaps://dir.example.org","base_dn":"dc=example,dc=org"}`, "dir.example.org:636", TLSLDAPS, "uid", ""},
		{TypeLDAP, `{"host":"ldap://dir.example.org","base_dn":"dc=example,dc=org"}`, "dir.example.org:389", TLSStartTLS, "uid", ""},
		{TypeAD, `{"host":"dc1.corp.example:3269","base_dn":"dc=corp","tls":"ldaps"}`, "dc1.corp.example:3269", TLSLDAPS, "sAMAccountName", ""},
		{TypeAD, `{"host":"dc1","base_dn":"dc=corp","account_suffix":"@corp.example"}`, "dc1:389", TLSStartTLS, "sAMAccountName", ""},
		{TypeLDAP, `{"host":"[::1]:1636","base_dn":"dc=x","tls":"ldaps","username_attribute":"mail"}`, "[::1]:1636", TLSLDAPS, "mail", ""},
		{TypeLDAP, `{"host":"ldaps://x","base_dn":"dc=x","tls":"starttls"}`, "", "", "", "contradicts"},
		{TypeLDAP, `{"host":"ldap://x","base_dn":"dc=x","tls":"ldaps"}`, "", "", "", "contradicts"},
		{TypeLDAP, `{"host":"ldapi:///run/slapd","base_dn":"dc=x"}`, "", "", "", "host"},
		{TypeLDAP, `{"host":"x:99999","base_dn":"dc=x"}`, "", "", "", "port"},
		{TypeLDAP, `{"host":"x","base_dn":"dc=x","tls_insecure_skip_verify":1}`, "", "", "", "cannot be turned off"},
		{TypeLDAP, `{"host":"x","base_dn":"dc=x","insecure":false}`, "x:389", TLSStartTLS, "uid", ""},
		{TypeLDAP, `{"host":"x","base_dn":"dc=x","timeout":"10"}`, "", "", "", "timeout: must be a whole number"},
		{TypeAD, `{"host":"x","base_dn":"dc=x","account_suffix":"corp example"}`, "", "", "", "account_suffix"},
		{TypeLDAP, `[1]`, "", "", "", "JSON object"},
	}
	for _, tc := range cases {
		t.Run(tc.cfg, func(t *testing.T) {
			cfg, err := ParseConfig(tc.kind, json.RawMessage(tc.cfg))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.addr != tc.addr || cfg.TLS != tc.tls || cfg.UsernameAttribute != tc.uattr {
				t.Fatalf("addr %q tls %q uattr %q", cfg.addr, cfg.TLS, cfg.UsernameAttribute)
			}
		})
	}
}

func TestParseConfigGroupMapping(t *testing.T) {
	cases := []struct {
		cfg string
		on  bool
	}{
		{`{"host":"x","base_dn":"dc=x"}`, false},
		{`{"host":"x","base_dn":"dc=x","group_roles":[{"dn":"cn=g,dc=x","role_id":1}]}`, true},
		{`{"host":"x","base_dn":"dc=x","map_group_to_role":0,"group_roles":[{"dn":"cn=g,dc=x","role_id":1}]}`, false},
		{`{"host":"x","base_dn":"dc=x","map_group_to_role":1}`, true},
	}
	for _, tc := range cases {
		cfg, err := ParseConfig(TypeLDAP, json.RawMessage(tc.cfg))
		if err != nil {
			t.Fatalf("%s: %v", tc.cfg, err)
		}
		if *cfg.MapGroupToRole != tc.on {
			t.Errorf("%s: mapping %v, want %v", tc.cfg, *cfg.MapGroupToRole, tc.on)
		}
	}
}

func TestADReason(t *testing.T) {
	cases := map[string]string{
		"80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 52e, v4563": "",
		"80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 525, v4563": "",
		"80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 533, v4563": "disabled",
		"80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 775, v4563": "locked",
		"80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data 773, v4563": "must be changed",
		"Invalid credentials": "",
	}
	for msg, want := range cases {
		got := adReason(msg)
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", msg, got, want)
		}
	}
}

func TestBareName(t *testing.T) {
	for in, want := range map[string]string{`CORP\carol`: "carol", "carol@corp.example": "carol", "carol": "carol", "@x": "@x"} {
		if got := bareName(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}
