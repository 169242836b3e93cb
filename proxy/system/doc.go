// Package system is the backend of the `system` service type: everything
// under /api/v2/system/, the platform's own configuration.
//
// # Resources
//
// admin, user, app, service, role, cors, limit, lookup, custom,
// email_template and event_script are records of the system store
// (proxy/store). Each supports, as DreamFactory's system resources do:
//
//	GET    /system/R            list: fields, filter, limit, offset, order,
//	                            include_count, count_only, ids, related
//	GET    /system/R/{id}       one record (fields, related)
//	POST   /system/R            create: {"resource":[…]} or a bare array or
//	                            object; 201 {"resource":[{"id":N}]}
//	PATCH  /system/R[/{id}]     merge update, by id, by records carrying
//	PUT    /system/R[/{id}]     their id, or by ids/filter with one record;
//	                            PUT is PATCH for system records
//	DELETE /system/R[/{id}]     by id, ids, records or filter; everything
//	                            only with force=true
//
// The list parameters use the table API's query language
// (proxy/filter) over each resource's columns. Writes of several
// records follow the contract's batch modes: by default each record is
// written in its own transaction and the batch stops at the first failure,
// keeping what was written; continue=true goes on past failures;
// rollback=true writes the whole batch in one transaction. A failed batch is
// a 400 with context.errors [{index, message}]; a request carrying a single
// record gets that record's error as is (a 400 listing every validation
// problem, a 409 for a duplicate).
//
// Related records travel as DreamFactory writes them, in the parent's
// transaction: role_service_access_by_role_id and lookup_by_role_id on a
// role, user_to_app_to_role_by_user_id and lookup_by_user_id on a user or
// admin, lookup_by_app_id on an app. An entry with an id is updated (and
// re-parented when its key names another parent), one without is created,
// and one whose parent key is null is deleted. related= adds them (and the
// belongs-to records) to reads.
//
// Every write bumps the configuration version in its transaction
// (store.Touch), so every instance reloads, and then reloads the writer's
// own registry, so the writer's next request already sees the change.
//
// The other resources: service_type, script_type (the script engines and
// whether each is available here), environment, constant, event, cache,
// package (export and import of the whole configuration), limit_cache
// (the counters of the rate-limit engine) and admin/session, admin/password
// and admin/profile (the administrator's sign-in: the identity engine, put
// on the wire by Options.SignIn).
//
// # Access
//
// Administrators (caller.Identity.Admin) reach every system resource, and
// so do calls the RBAC stage allowed through the caller's role
// (caller.RoleGranted): as in DreamFactory, a role entry for the system
// service may delegate components such as user/* to users who are not
// administrators (handlers/rbac never lets an entry for all services reach
// this service). The exceptions are GET environment, admin/session and the
// POST of admin/password (the reset request), as in DreamFactory. Everyone
// else gets 403.
//
// Package system imports the leaves, proxy/service, proxy/store,
// proxy/filter, proxy/identity and the limiter engine it serves
// limit_cache from; never another backend or the proxy root.
package system
