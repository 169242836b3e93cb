// Package cache is the key-value cache service backend, for the service
// types cache_redis (github.com/redis/go-redis) and cache_memcached
// (github.com/bradfitz/gomemcache): one [Handler] over a small [Store]
// interface, with DreamFactory's routes:
//
//	GET    /{svc}/{key}            the value (JSON as application/json, text as text/plain);
//	                               404 when missing, ?default=v answers v instead,
//	                               ?clear=true (or pull) deletes it after reading
//	GET    /{svc}?keys=a,b         {"a":…,"b":…} for the keys that exist
//	POST   /{svc}/{key}            add: 201 {"key":value}; 409 when the key exists
//	POST   /{svc}                  add {"k1":v1,"k2":v2}: 201 {"success":true}, or 409
//	                               naming the keys that exist, with nothing stored
//	PUT    /{svc}/{key}, /{svc}    set (create or replace), 200; PATCH is the same
//	DELETE /{svc}/{key}            {"success":true|false} (false: the key did not exist)
//	DELETE /{svc}?keys=a,b         {"a":true,"b":false}
//
// A JSON body (or each value of a keyless JSON object) is stored as its
// compact JSON text, so JSON comes back as JSON and other clients of the
// server read plain JSON; any other body (text/plain, form data for a
// single key, bytes) is stored as it is. A stored value that parses as
// JSON is answered as JSON. Values expire after ?ttl= seconds, else the
// service's default_ttl, else 300 seconds; ?forever=true stores without
// expiry. Keys are the rest of the path ("a/b" is one key); memcached
// refuses keys with spaces or control characters and over 250 bytes (400).
//
// A server that cannot be reached is a 503 in the error envelope; both
// clients redial on the next request, so the service recovers by itself.
// A Redis key that holds a list, hash or set is a 409.
package cache
