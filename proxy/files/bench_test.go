package files_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/portcullis-dev/portcullis/proxy/files"
)

// BenchmarkLargeFile uploads and downloads one large file (1 GiB, or
// PORTCULLIS_BENCH_FILE_BYTES) through the handler and reports the peak
// heap in use while doing it: it must stay flat, a few MiB, whatever the
// file's size.
//
//	go test -run x -bench LargeFile -benchtime 1x ./proxy/files/
func BenchmarkLargeFile(b *testing.B) {
	size := int64(1 << 30)
	if v, err := strconv.ParseInt(os.Getenv("PORTCULLIS_BENCH_FILE_BYTES"), 10, 64); err == nil && v > 0 {
		size = v
	}
	h := &files.Handler{Name: "files", Storage: files.NewLocal(b.TempDir())}
	srv := httptest.NewServer(h)
	defer srv.Close()

	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)

	b.SetBytes(2 * size)
	b.ResetTimer()
	for range b.N {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/big.bin", io.LimitReader(zeros{}, size))
		req.ContentLength = size
		resp, err := srv.Client().Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("upload = %d", resp.StatusCode)
		}
		resp, err = srv.Client().Get(srv.URL + "/big.bin")
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n != size {
			b.Fatalf("downloaded %d of %d bytes", n, size)
		}
	}
	b.StopTimer()
	close(stop)
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(base.HeapInuse)/(1<<20), "base-heap-MiB")
}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
