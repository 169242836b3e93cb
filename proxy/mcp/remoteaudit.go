package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/caller"
)

// Audit of the url form.
//
// A tools/call request passing through a remote service is recorded like
// a call of the services form. The request body (a JSON-RPC message or a
// batch; the pipeline bounds its size) is read before it is forwarded; the
// answer is watched as it passes, never held: the bytes go to the client
// first, then a copy of what is needed is read. The answer to a call comes
// back either in the POST's own answer (streamable HTTP: a JSON body or an
// event stream), or, with the HTTP+SSE transport, as an event on the
// client's GET stream, matched by the session's message endpoint and the
// call's id. Fields: service is "" (no data service is involved), status is
// the HTTP status of the forwarded exchange when it failed, else that of
// the answer: 200 for a result, the code of the error envelope a tool error
// carries (as the services form's do) or 500 for another tool error, 400,
// 404 or 500 for a JSON-RPC error; records is the number of records the
// result's text holds (the services form's counting), else 0.

// maxAuditBody bounds the bytes of one JSON answer or one event read to
// find a tool call's result; a larger answer is recorded without it.
const maxAuditBody = 4 << 20

// maxPending bounds the tool calls awaiting their answer on an event
// stream (HTTP+SSE transport) per remote service.
const maxPending = 1024

// rpcMessage is a JSON-RPC 2.0 request or response.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// parseMessages reads a JSON-RPC message or batch; nil when b is neither.
func parseMessages(b []byte) []rpcMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	if b[0] == '[' {
		var list []rpcMessage
		if json.Unmarshal(b, &list) != nil {
			return nil
		}
		return list
	}
	var m rpcMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return []rpcMessage{m}
}

// pendingCall is a tool call whose answer has not been seen yet.
type pendingCall struct {
	ev    Event
	start time.Time
}

// startCalls reads r's body for tools/call requests and registers them
// as awaiting their answer under key; it returns their ids (none when the
// body holds no tool call). r.Body is replaced by an equivalent reader.
// They are registered before the request is forwarded, since with the
// HTTP+SSE transport the answer may reach the event stream before the
// POST's own 202 comes back.
func (rm *remote) startCalls(r *http.Request, key string) []string {
	if rm.audit == nil || r.Method != http.MethodPost {
		return nil
	}
	body := peekBody(r)
	start := rm.now()
	var ids []string
	for _, m := range parseMessages(body) {
		if m.Method != "tools/call" || len(m.ID) == 0 {
			continue
		}
		ev := callEvent(m, rm.name, start)
		ev.setCaller(caller.IdentityFrom(r.Context()))
		rm.await(key, string(m.ID), &pendingCall{ev: ev, start: start})
		ids = append(ids, string(m.ID))
	}
	return ids
}

// finish records the calls of one POST still waiting when its answer
// ended: left waiting for the session's event stream when the answer was
// 202 Accepted and the POST named a session (HTTP+SSE), else recorded
// with the answer's status (a success without a result seen: no records).
func (rm *remote) finish(key string, ids []string, status int, session bool) {
	if session && status == http.StatusAccepted {
		return
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	calls := rm.pending[key]
	for _, id := range ids {
		if pc, ok := calls[id]; ok {
			delete(calls, id)
			rm.npending--
			pc.ev.Status = status
			rm.record(pc)
		}
	}
	if len(calls) == 0 {
		delete(rm.pending, key)
	}
}

// record completes an event's duration and adds it to the audit log.
func (rm *remote) record(pc *pendingCall) {
	pc.ev.DurationMS = float64(rm.now().Sub(pc.start).Microseconds()) / 1000
	rm.audit.Record(pc.ev)
}

// await keeps a call until its answer is seen; when too many wait, the
// oldest is recorded as accepted without an answer.
func (rm *remote) await(key, id string, pc *pendingCall) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if rm.npending >= maxPending {
		var oldK, oldID string
		var old *pendingCall
		for k, calls := range rm.pending {
			for i, c := range calls {
				if old == nil || c.start.Before(old.start) {
					oldK, oldID, old = k, i, c
				}
			}
		}
		if old != nil {
			delete(rm.pending[oldK], oldID)
			rm.npending--
			old.ev.Status = http.StatusAccepted
			rm.record(old)
		}
	}
	calls := rm.pending[key]
	if calls == nil {
		calls = map[string]*pendingCall{}
		rm.pending[key] = calls
	}
	if _, dup := calls[id]; !dup {
		rm.npending++
	}
	calls[id] = pc
}

// answered records the calls waiting under key that msgs answer.
func (rm *remote) answered(key string, msgs []rpcMessage) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	calls := rm.pending[key]
	if len(calls) == 0 {
		return
	}
	for _, m := range msgs {
		if len(m.ID) == 0 || m.Method != "" {
			continue
		}
		pc, ok := calls[string(m.ID)]
		if !ok {
			continue
		}
		delete(calls, string(m.ID))
		rm.npending--
		pc.ev.Status, pc.ev.Records = resultStatus(m)
		rm.record(pc)
	}
	if len(calls) == 0 {
		delete(rm.pending, key)
	}
}

// awaiting reports whether calls wait under key.
func (rm *remote) awaiting(key string) bool {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return len(rm.pending[key]) > 0
}

// streamClosed records the calls of a session still waiting when its
// event stream ended, as accepted without an answer seen.
func (rm *remote) streamClosed(key string) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for id, pc := range rm.pending[key] {
		delete(rm.pending[key], id)
		rm.npending--
		pc.ev.Status = http.StatusAccepted
		rm.record(pc)
	}
	delete(rm.pending, key)
}

// resultStatus is the status and record count of a tool call's answer.
func resultStatus(m rpcMessage) (int, int) {
	if m.Error != nil {
		switch m.Error.Code {
		case -32700, -32600, -32602:
			return http.StatusBadRequest, 0
		case -32601, -32002:
			return http.StatusNotFound, 0
		}
		return http.StatusInternalServerError, 0
	}
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return http.StatusOK, 0
	}
	text := ""
	if len(res.Content) == 1 && res.Content[0].Type == "text" {
		text = res.Content[0].Text
	}
	if res.IsError {
		var env struct {
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(text), &env) == nil && env.Error.Code >= 400 && env.Error.Code < 600 {
			return env.Error.Code, 0
		}
		return http.StatusInternalServerError, 0
	}
	if text == "" {
		return http.StatusOK, 0
	}
	return http.StatusOK, countRecords("", []byte(text))
}

// sessionKey names an HTTP+SSE session by its message endpoint on the
// remote server: the path and the query without the platform's
// credentials, which the endpoint rewriting adds.
func sessionKey(path string, q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		if k != "api_key" && k != "session_token" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(path)
	for i, k := range keys {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(strings.Join(q[k], ",")))
	}
	return b.String()
}

// watcher passes an answer through unchanged and unbuffered and reads a
// copy of it for the JSON-RPC answers to tool calls: a JSON body whole
// (up to maxAuditBody), an event stream event by event. onData gets a JSON
// body or the data of a message event.
type watcher struct {
	http.ResponseWriter
	status  int
	events  bool
	checked bool
	off     bool
	onData  func([]byte)

	body  []byte // a JSON answer so far
	line  []byte // a partial event-stream line
	data  []byte // the data of the event being read
	event string // its type
}

func (w *watcher) check() {
	if !w.checked {
		w.checked = true
		ct := strings.ToLower(strings.TrimSpace(w.Header().Get("Content-Type")))
		w.events = strings.HasPrefix(ct, "text/event-stream")
		if !w.events && !strings.HasPrefix(ct, "application/json") {
			w.off = true
		}
	}
}

// WriteHeader records the status.
func (w *watcher) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.check()
	w.ResponseWriter.WriteHeader(code)
}

// Write passes p on, then reads it.
func (w *watcher) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.check()
	n, err := w.ResponseWriter.Write(p)
	if !w.off {
		w.read(p[:n])
	}
	return n, err
}

func (w *watcher) read(p []byte) {
	if !w.events {
		if len(w.body)+len(p) > maxAuditBody {
			w.off, w.body = true, nil
			return
		}
		w.body = append(w.body, p...)
		return
	}
	for len(p) > 0 && !w.off {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			if len(w.line) > maxAuditBody {
				w.line = nil
			}
			return
		}
		line := strings.TrimRight(string(append(w.line, p[:i]...)), "\r")
		w.line, p = nil, p[i+1:]
		switch {
		case line == "":
			if len(w.data) > 0 && (w.event == "" || w.event == "message") {
				w.onData(w.data)
			}
			w.data, w.event = nil, ""
		case strings.HasPrefix(line, "event:"):
			w.event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if len(w.data)+len(line) > maxAuditBody {
				w.data = nil
				continue
			}
			if len(w.data) > 0 {
				w.data = append(w.data, '\n')
			}
			w.data = append(w.data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		}
	}
}

// end reads a JSON answer once it is complete.
func (w *watcher) end() {
	if !w.off && !w.events && len(w.body) > 0 {
		w.onData(w.body)
	}
}

// Flush sends what has been written to the client.
func (w *watcher) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap returns the wrapped writer, for http.ResponseController.
func (w *watcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }
