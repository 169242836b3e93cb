// Command mcp-client is an example: an MCP client (the official Go SDK's)
// listing and calling the tools of a Portcullis mcp service. Against
// `make run` (the demo serves the sample database's tools at /api/v2/ai):
//
//	go run ./examples/mcp-client -key $K
//	go run ./examples/mcp-client -key $K -tool query_records -args '{"table":"customer","fields":["id","name"],"limit":3}'
//
// The API key goes in the X-Platform-API-Key header of every request; add
// -session for a signed-in user's session token, -sse for an mcp service
// proxying a server of the older HTTP+SSE transport.
package main
