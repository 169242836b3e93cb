package apierr

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// DefaultMaxBody is the default cap on a request body: 16 MiB.
const DefaultMaxBody int64 = 16 << 20

// DecodeJSON reads r's body into v. An empty body leaves v untouched and
// returns nil when allowEmpty is set, a 400 otherwise. Malformed JSON is a 400
// InvalidJSON; a body over the cap set by the pipeline is a 413; trailing
// data after the JSON value is malformed JSON.
func DecodeJSON(r *http.Request, v any, allowEmpty bool) error {
	if r.Body == nil || r.Body == http.NoBody {
		if allowEmpty {
			return nil
		}
		return BadRequest("No record(s) detected in request.")
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return As(err)
	}
	return Unmarshal(data, v, allowEmpty)
}

// Unmarshal decodes data into v with the same rules as [DecodeJSON]. Numbers
// decode as json.Number when v holds interface values.
func Unmarshal(data []byte, v any, allowEmpty bool) error {
	if len(bytes.TrimSpace(data)) == 0 {
		if allowEmpty {
			return nil
		}
		return BadRequest("No record(s) detected in request.")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return BadRequest("Invalid value for field '%s': expected %s.", ute.Field, ute.Type.String()).WithCause(err)
		}
		return InvalidJSON(err)
	}
	// Anything but blanks after the value is malformed (dec.More alone
	// would let a stray ']' or '}' through).
	if _, err := dec.Token(); err != io.EOF {
		return InvalidJSON(errors.New("unexpected data after the JSON value"))
	}
	return nil
}

// WriteJSON writes v as JSON with status. Errors from the client connection
// are returned for the caller to ignore or log.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
