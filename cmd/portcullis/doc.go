// Command portcullis runs the Portcullis data API platform.
//
//	portcullis init    --data DIR --email E --password P   seed a system database, print the admin API key
//	portcullis serve   --data DIR [--addr HOST:PORT]       serve the API
//	portcullis demo    [--addr HOST:PORT]                  a throw-away instance with a sample database
//	portcullis version                                     print the version
//
// Every flag has an environment twin: --system-db is PORTCULLIS_SYSTEM_DB.
package main
