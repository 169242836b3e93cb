package service

import "context"

// EventPath is one resource path of a service on which API events fire,
// and the verbs they fire for. GET /system/event builds the event names
// scripts attach to from it, as DreamFactory builds them from a service's
// paths: {service}.{path with "/" as "."}.{verb}[.pre_process|.post_process|.queued].
type EventPath struct {
	// Path is the resource path below the service, "" for the service
	// root, with placeholders in braces: "_table/{table_name}",
	// "_table/{table_name}/{id}".
	Path string
	// Verbs are the lower-case verbs the path answers: "get", "post", …
	Verbs []string
	// Parameter lists, for a placeholder, the values it takes now
	// ({"table_name": ["contact", "todo"]}), so that clients can name
	// the resolved events (db._table.contact.get.pre_process) too. Nil
	// when the path has none or they cannot be listed.
	Parameter map[string][]string
}

// EventLister is implemented by backends that can list the API events
// their resources fire. Backends that do not implement it are listed with
// their root path and the five verbs.
type EventLister interface {
	Events(ctx context.Context) ([]EventPath, error)
}
