// Package files is the file service backend: DreamFactory's file API over
// a [Storage], for the service types local_file (a folder of this
// machine, through [os.Root] so that no path or symbolic link leaves it),
// sftp_file (an SSH server, with github.com/pkg/sftp; host key pinned by
// host_fingerprint) and webdav_file (a WebDAV server, with
// github.com/studio-b12/gowebdav, extended here with a preemptive basic
// authenticator so uploads stream instead of being buffered for an
// authentication retry, and a seekable reader over ranged GETs). Remote
// storages connect on first use and again after a failure: a server that
// cannot be reached is a 503 and the service recovers by itself.
//
// Routes, below /api/v2/{service}; a path ending in "/" (or the root) is a
// folder, any other a file:
//
//	GET    /                 list (include_files, include_folders, full_tree,
//	                         as_list, fields, search), include_properties,
//	                         zip=true, as_access_list (root only)
//	GET    /{folder}/        the same for a folder
//	GET    /{file}           the bytes, streamed (Range, If-None-Match,
//	                         If-Modified-Since; ETag and Last-Modified set),
//	                         download=true for an attachment;
//	                         include_properties (+ content, is_base64) as JSON
//	POST   /{folder}/        X-File-Name (raw body is the file), X-Folder-Name,
//	                         multipart field "files", JSON entries
//	                         {"resource":[{"name","type","content","is_base64",
//	                         "source_path","delete_source"}]}, or no body
//	                         (create the folder named by the path, parents
//	                         included); check_exist=true refuses to replace
//	POST   /{file}           the body (or one multipart upload) is the file
//	PUT                      as POST (DreamFactory aliases them)
//	PATCH                    501: properties are not writable, as in DreamFactory
//	DELETE /{file}           the file; /{folder}/ the folder (force=true when
//	                         not empty, content_only=true to keep it), or the
//	                         entries a JSON body lists
//
// Creates answer 201. Uploads are streamed to a hidden file in the target
// folder and renamed (moved) into place only once complete, on every
// storage, so an abandoned or
// failed upload never leaves a half-written file, and a file of any size
// never sits in memory. A path with "." or ".." segments, empty segments,
// backslashes, control characters, encoded slashes or NUL bytes is a 400;
// a symbolic link leading outside a local root is a 400 too (on SFTP and
// WebDAV servers, links are the server's own: its chroot is the boundary). A missing file or
// folder is a 404 whose message never shows a server path; a conflict
// (check_exist on an existing file, an existing folder, a non-empty folder
// deleted without force) is a 409.
//
// Differences from DreamFactory: url= uploads (the server fetching a URL)
// are refused with 400, as they would let any caller with write access
// make the server call arbitrary addresses; source_container
// (copying between services) is refused per entry.
//
// extract=true unpacks an uploaded zip (X-File-Name, a multipart upload,
// or a body sent to a file's path, which unpacks into that file's folder)
// instead of storing it, with clean=true emptying the folder first, as
// DreamFactory does; an upload that is not a zip is stored as usual. The
// answer names the folder ({"name","path","type":"folder"}; DreamFactory
// says "file"). Unlike DreamFactory, the whole archive is checked before
// anything is written or cleaned: an entry path that would leave the
// folder (zip-slip), an absolute or Windows path, a link, a corrupt entry,
// more than MaxListEntries entries or more than MaxExtractBytes unpacked
// (a zip bomb) is a 400, and with check_exist an entry naming an existing
// file is a 409; nothing is written then.
//
// public_path entries (files, or folders and everything below them) are
// served read-only without credentials at GET /storage/{service}/{path},
// DreamFactory's storage route ([Handler.ServePublic]); any other path
// there is a 403.
//
// A [Handler] is an http.Handler usable alone over any [Storage]:
//
//	h := &files.Handler{Name: "uploads", Storage: files.NewLocal("/srv/uploads")}
//	mux.Handle("/uploads/", http.StripPrefix("/uploads", h))
package files
