package rws

import "syscall"

// peek looks, without waiting, whether the upstream has closed an idle
// connection or sent on it: either leaves peekOK false.
func (c *directConn) peek(fd uintptr) bool {
	_, _, err := syscall.Recvfrom(int(fd), c.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	c.peekOK = err == syscall.EAGAIN || err == syscall.EWOULDBLOCK
	return true
}
