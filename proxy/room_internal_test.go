package proxy

import (
	"testing"
	"unsafe"
)

// TestRequestRoomSize: a request's one allocation of the pipeline's own
// (caller.State with the proxy's room) stays in the 576-byte size class;
// one word more and every request allocates 640 bytes.
func TestRequestRoomSize(t *testing.T) {
	if n := unsafe.Sizeof(requestRoom{}); n > 576 {
		t.Errorf("requestRoom is %d bytes, over the 576-byte size class", n)
	}
}
