// Package service holds the contracts between the Portcullis router and the
// backends behind it: a [Type] builds a [Backend] for a configured service,
// a [Backend] is an http.Handler for everything below /api/v2/{service}/,
// and the [Target] in a request's context says which service, resource and
// verb a request is for.
//
// service imports apierr, caller and store only, and kin-openapi for the
// documents of [Documenter].
package service
