// Package apikey is the pipeline stage that identifies the app behind a
// request by its API key and starts the caller identity: app, the app's
// default role, requestor API.
//
// The key is read from the X-Platform-API-Key header, its DreamFactory
// synonym X-DreamFactory-API-Key, or the api_key query parameter. Keys are
// looked up through [AppLookup] (the proxy adapts its configuration
// snapshot; embedders may pass [Static]) and the stored key is then
// compared with the one sent in constant time. A missing key or one that
// names no app is a 401, an inactive app a 403 (DreamFactory's
// `App is not active.`).
//
// A request whose context already carries a script identity (an inner call
// made by an event script through the pipeline), or any identity marked
// by [caller.WithInner] (an inner call such as an MCP tool call), keeps
// that identity.
//
// apikey imports apierr and caller only.
package apikey
