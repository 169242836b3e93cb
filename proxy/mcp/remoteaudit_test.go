package mcp

import (
	"net/url"
	"testing"
)

func TestResultStatus(t *testing.T) {
	for _, tc := range []struct {
		name, msg       string
		status, records int
	}{
		{"result with records", `{"id":1,"result":{"content":[{"type":"text","text":"{\"resource\":[{\"id\":1},{\"id\":2},{\"id\":3}]}"}]}}`, 200, 3},
		{"plain text result", `{"id":1,"result":{"content":[{"type":"text","text":"echo: hi"}]}}`, 200, 0},
		{"several contents", `{"id":1,"result":{"content":[{"type":"text","text":"[1,2]"},{"type":"text","text":"x"}]}}`, 200, 0},
		{"tool error with an envelope", `{"id":1,"result":{"isError":true,"content":[{"type":"text","text":"{\"error\":{\"code\":403,\"message\":\"no\"}}"}]}}`, 403, 0},
		{"tool error without one", `{"id":1,"result":{"isError":true,"content":[{"type":"text","text":"boom"}]}}`, 500, 0},
		{"invalid params", `{"id":1,"error":{"code":-32602,"message":"unknown tool"}}`, 400, 0},
		{"method not found", `{"id":1,"error":{"code":-32601,"message":"no"}}`, 404, 0},
		{"internal error", `{"id":1,"error":{"code":-32603,"message":"no"}}`, 500, 0},
		{"server error", `{"id":1,"error":{"code":-32000,"message":"no"}}`, 500, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs := parseMessages([]byte(tc.msg))
			if len(msgs) != 1 {
				t.Fatalf("parsed %d messages", len(msgs))
			}
			if s, n := resultStatus(msgs[0]); s != tc.status || n != tc.records {
				t.Errorf("= %d, %d records; want %d, %d", s, n, tc.status, tc.records)
			}
		})
	}
}

func TestParseMessagesAndSessionKey(t *testing.T) {
	if got := parseMessages([]byte(` [{"id":1,"method":"tools/call"},{"method":"notifications/initialized"}] `)); len(got) != 2 || got[0].Method != "tools/call" {
		t.Errorf("batch = %+v", got)
	}
	for _, bad := range []string{"", "x", "[1", `"a"`} {
		if got := parseMessages([]byte(bad)); got != nil {
			t.Errorf("%q = %+v", bad, got)
		}
	}
	for _, tc := range []struct {
		path, query, want string
	}{
		{"/sse", "sessionid=ab", "/sse?sessionid=ab"},
		{"/sse", "sessionid=ab&api_key=k&session_token=s", "/sse?sessionid=ab"},
		{"/m", "b=2&a=1", "/m?a=1&b=2"},
		{"/mcp", "api_key=k", ""},
		{"/mcp", "", ""},
	} {
		q, _ := url.ParseQuery(tc.query)
		if got := sessionKey(tc.path, q); got != tc.want {
			t.Errorf("sessionKey(%s, %s) = %q, want %q", tc.path, tc.query, got, tc.want)
		}
	}
}
