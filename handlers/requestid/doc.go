// Package requestid gives every request an id: the client's X-Request-Id
// when it is a sane token, else a new random one. The id is echoed in the
// response header and carried in the context for logs.
package requestid
