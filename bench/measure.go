package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"
)

// procSample is what the servers' process has used up to a moment.
type procSample struct {
	mallocs    uint64
	allocBytes uint64
	cpu        time.Duration // user + system
}

// sample reads the allocation counters and the CPU time of this process.
func sample() procSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return procSample{mallocs: ms.Mallocs, allocBytes: ms.TotalAlloc, cpu: cpu}
}

// sub returns s - before.
func (s procSample) sub(before procSample) procSample {
	return procSample{mallocs: s.mallocs - before.mallocs, allocBytes: s.allocBytes - before.allocBytes, cpu: s.cpu - before.cpu}
}

// resetPeakRSS collects garbage, returns freed memory to the system and
// resets the kernel's peak-RSS mark (VmHWM), so that the next readPeakRSS
// reports the peak of what runs in between. It reports whether the reset
// worked (Linux ≥ 4.0 with a writable /proc/self/clear_refs).
func resetPeakRSS() bool {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// readPeakRSS returns VmHWM in bytes, or the process's lifetime peak from
// getrusage when /proc is not there.
func readPeakRSS() uint64 {
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
				f := bytes.Fields(rest)
				if len(f) >= 1 {
					if kb, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil {
						return kb << 10
					}
				}
			}
		}
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		return uint64(ru.Maxrss) << 10 // kilobytes on Linux
	}
	return 0
}

// benchDBPrefix begins the name of every database the bench creates.
const benchDBPrefix = "pc_bench_"

// otherClient reports whether process pid is a PostgreSQL backend serving
// a database other than the bench's. A backend's process title is
// "postgres: [CLUSTER: ]USER DATABASE HOST(PORT) STATE" (or [local] for
// a socket); the server's own processes (checkpointer, WAL writer, …),
// which work for every database, are not other clients.
func otherClient(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/cmdline")
	return err == nil && otherClientTitle(b)
}

// otherClientTitle is otherClient for the process title b.
func otherClientTitle(b []byte) bool {
	title, ok := bytes.CutPrefix(b, []byte("postgres: "))
	if !ok {
		return false
	}
	f := bytes.Fields(bytes.TrimRight(title, "\x00 "))
	for k := 2; k < len(f); k++ {
		if host := f[k]; bytes.Equal(host, []byte("[local]")) || bytes.HasSuffix(host, []byte(")")) && bytes.IndexByte(host, '(') > 0 {
			return !bytes.HasPrefix(f[k-1], []byte(benchDBPrefix))
		}
	}
	return false
}

// dbServerNames are the process names of the database servers whose CPU a
// run reports (SQLite runs inside the server process).
var dbServerNames = map[string]bool{"postgres": true, "mariadbd": true, "mysqld": true}

// dbServerCPU sums the user and system CPU time of the PostgreSQL and
// MariaDB/MySQL server processes on this machine, from /proc. Only the
// bench's engine is busy during a run, so the difference across a run is
// that engine's CPU for the run. PostgreSQL backends of other databases
// (another program's tests on the same server) are left out (otherClient);
// MariaDB serves every client in one process, so there other clients of
// the same server count too: run on a quiet machine. The CPU of the
// processes' reaped children counts as well (cutime and cstime): a
// PostgreSQL backend that exits during a round (its pool closed the
// connection) leaves the sum, and its whole time reaches the postmaster's
// children's time when it is reaped, so the difference across the round
// is still what it spent in it. It is 0 where /proc cannot be read.
func dbServerCPU() time.Duration {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	tick := time.Second / 100 // USER_HZ on Linux
	var total time.Duration
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || close < open || !dbServerNames[string(b[open+1:close])] || otherClient(e.Name()) {
			continue
		}
		f := bytes.Fields(b[close+1:])
		if len(f) < 15 { // state is f[0]; utime, stime, cutime, cstime are fields 14-17
			continue
		}
		var sum int64
		for _, v := range f[11:15] {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			sum += n
		}
		total += time.Duration(sum) * tick
	}
	return total
}
