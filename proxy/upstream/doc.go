// Package upstream decides which remote addresses a service may reach and
// dials them: the server-wide upstream allow list (`serve --upstream-allow`)
// parsed once, a dialer that checks the address it actually connects to
// (so DNS rebinding cannot reach a forbidden address), and an HTTP
// transport built on that dialer with the platform's timeouts.
//
// Every backend that opens a connection to a host named in a service's
// configuration (rws, SOAP, MCP, SFTP, WebDAV, SMTP, brokers) dials through
// this package, so one flag governs them all. It is a leaf: it imports
// nothing of the project.
package upstream
