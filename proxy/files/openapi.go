package files

import (
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/portcullis-dev/portcullis/proxy/service"
)

// Names of the document's own schemas.
const (
	schemaEntry   = "FileEntry"
	schemaListing = "FileListing"
	schemaResult  = "FileResult"
	schemaResults = "FileResults"
	schemaItems   = "FileItems"
)

// Document is the OpenAPI document of a file service: the root, folders
// and files, with every query option of the file API.
func Document() *openapi3.T {
	doc := service.NewDocument("File storage: list folders, read files (ranges, downloads, properties), upload files (raw body with X-File-Name, multipart field 'files', or JSON entries), create folders, and delete files and folders. Paths ending in '/' are folders.")
	s := doc.Components.Schemas
	str, date := openapi3.NewStringSchema, func() *openapi3.Schema { return service.Describe(openapi3.NewStringSchema(), "RFC 1123 time, GMT.") }
	entry := openapi3.NewObjectSchema().
		WithProperty("path", service.Describe(str(), "Path from the service root; folders end with '/'.")).
		WithProperty("name", service.Describe(str(), "Name relative to the listed folder.")).
		WithProperty("type", openapi3.NewStringSchema().WithEnum("file", "folder")).
		WithProperty("last_modified", date()).
		WithProperty("content_type", str()).
		WithProperty("content_length", openapi3.NewInt64Schema())
	entry.Required = []string{"path", "name", "type"}
	s[schemaEntry] = openapi3.NewSchemaRef("", entry)
	listing := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(entry))
	listing.Required = []string{"resource"}
	s[schemaListing] = openapi3.NewSchemaRef("", listing)
	failed := openapi3.NewObjectSchema().WithProperty("message", str())
	res := openapi3.NewObjectSchema().
		WithProperty("name", str()).WithProperty("path", str()).
		WithProperty("type", openapi3.NewStringSchema().WithEnum("file", "folder")).
		WithProperty("error", service.Describe(failed, "Set on an entry that failed; the others were done."))
	res.Required = []string{"name", "path"}
	s[schemaResult] = openapi3.NewSchemaRef("", res)
	results := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(res))
	results.Required = []string{"resource"}
	s[schemaResults] = openapi3.NewSchemaRef("", results)
	item := openapi3.NewObjectSchema().
		WithProperty("name", service.Describe(str(), "Name or path relative to the folder.")).
		WithProperty("path", str()).
		WithProperty("type", openapi3.NewStringSchema().WithEnum("file", "folder")).
		WithProperty("content", service.Describe(str(), "The file's content.")).
		WithProperty("is_base64", service.Describe(openapi3.NewBoolSchema(), "content is base64.")).
		WithProperty("source_path", service.Describe(str(), "Copy this file or folder instead.")).
		WithProperty("delete_source", service.Describe(openapi3.NewBoolSchema(), "Move instead of copy."))
	items := openapi3.NewObjectSchema().WithProperty("resource", openapi3.NewArraySchema().WithItems(item))
	s[schemaItems] = openapi3.NewSchemaRef("", items)

	boolean := openapi3.NewBoolSchema
	listParams := []*openapi3.ParameterRef{
		service.QueryParam("include_files", "List files (default true).", boolean()),
		service.QueryParam("include_folders", "List folders (default true).", boolean()),
		service.QueryParam("full_tree", "List the whole tree below the folder.", boolean()),
		service.QueryParam("as_list", "Answer a bare list of paths.", boolean()),
		service.QueryParam("fields", "Keys to keep in each entry (comma-separated; * for all).", str()),
		service.QueryParam("search", "Only entries whose name contains this text (case-insensitive).", str()),
		service.QueryParam("include_properties", "Describe the folder itself.", boolean()),
		service.QueryParam("zip", "Download the folder as a zip file.", boolean()),
	}
	createParams := []*openapi3.ParameterRef{
		service.QueryParam("check_exist", "Fail with 409 when the target exists, leaving it unchanged.", boolean()),
		{Value: openapi3.NewHeaderParameter("X-File-Name").WithDescription("Store the raw body as this file in the folder.").WithSchema(str())},
		{Value: openapi3.NewHeaderParameter("X-Folder-Name").WithDescription("Create this folder in the folder.").WithSchema(str())},
	}
	upload := &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().
		WithDescription("JSON entries, a multipart form with files in field 'files', or (with X-File-Name) the file's bytes.").
		WithJSONSchemaRef(service.SchemaRef(schemaItems)).
		WithFormDataSchema(openapi3.NewObjectSchema().WithProperty("files", openapi3.NewArraySchema().WithItems(openapi3.NewStringSchema().WithFormat("binary"))))}
	folderParam := service.PathParam("folder_path", "The folder's path from the service root (may contain '/').", nil)
	fileParam := service.PathParam("file_path", "The file's path from the service root (may contain '/').", nil)

	folderOps := func(path, id string, param *openapi3.ParameterRef, what string) {
		get := service.NewOperation("list"+id, "files", "List "+what, "Lists the folder's entries (or its properties, or a zip of it).")
		for _, p := range listParams {
			get.AddParameter(p.Value)
		}
		if id == "Root" {
			get.AddParameter(service.QueryParam("as_access_list", "The paths roles may name as components.", boolean()).Value)
		}
		service.AddResponse(get, http.StatusOK, "The entries.", service.SchemaRef(schemaListing))
		service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
		post := service.NewOperation("create"+id, "files", "Create in "+what, "Uploads files or creates folders in the folder; with no body, creates the folder named by the path.")
		for _, p := range createParams {
			post.AddParameter(p.Value)
		}
		post.RequestBody = upload
		service.AddResponse(post, http.StatusCreated, "What was created; failed entries carry an error.", service.SchemaRef(schemaResults))
		service.AddErrors(post, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
		put := *post
		put.OperationID = "replace" + id
		put.Summary = "Create in " + what + " (as POST)"
		del := service.NewOperation("delete"+id, "files", "Delete "+what, "Deletes the folder (force=true when it is not empty; content_only=true keeps it), or the entries listed in the body.")
		del.AddParameter(service.QueryParam("force", "Delete a folder that is not empty.", boolean()).Value)
		del.AddParameter(service.QueryParam("content_only", "Empty the folder but keep it.", boolean()).Value)
		del.RequestBody = service.JSONBody("Entries to delete ({\"resource\":[{\"path\"|\"name\",\"type\"}]}).", false, service.SchemaRef(schemaItems))
		service.AddResponse(del, http.StatusOK, "What was deleted.", service.SchemaRef(schemaResults))
		service.AddErrors(del, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable)...)
		for _, op := range []*openapi3.Operation{get, post, &put, del} {
			if param != nil {
				op.AddParameter(param.Value)
			}
		}
		service.AddOperation(doc, path, http.MethodGet, get)
		service.AddOperation(doc, path, http.MethodPost, post)
		service.AddOperation(doc, path, http.MethodPut, &put)
		service.AddOperation(doc, path, http.MethodDelete, del)
	}
	folderOps("/", "Root", nil, "the root folder")
	folderOps("/{folder_path}/", "Folder", folderParam, "a folder")

	get := service.NewOperation("getFile", "files", "Read a file", "Streams the file (Range and conditional requests honoured), or describes it with include_properties.")
	get.AddParameter(service.QueryParam("download", "Send as an attachment.", boolean()).Value)
	get.AddParameter(service.QueryParam("include_properties", "Answer the file's properties as JSON.", boolean()).Value)
	get.AddParameter(service.QueryParam("content", "With include_properties, add the content.", boolean()).Value)
	get.AddParameter(service.QueryParam("is_base64", "With content, base64 (default true).", boolean()).Value)
	get.AddParameter(fileParam.Value)
	get.Responses.Set("200", &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("The file's bytes (or its properties as JSON).").
		WithContent(openapi3.NewContentWithSchema(openapi3.NewStringSchema().WithFormat("binary"), []string{"application/octet-stream"}))})
	get.Responses.Set("206", &openapi3.ResponseRef{Value: openapi3.NewResponse().WithDescription("The requested range.")})
	service.AddErrors(get, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	post := service.NewOperation("writeFile", "files", "Write a file", "The body (any type), or one multipart upload in field 'files', becomes the file; an existing file is replaced unless check_exist=true. The parent folder must exist.")
	post.AddParameter(createParams[0].Value)
	post.AddParameter(fileParam.Value)
	post.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithDescription("The file's bytes.").
		WithContent(openapi3.NewContentWithSchema(openapi3.NewStringSchema().WithFormat("binary"), []string{"application/octet-stream"}))}
	service.AddResponse(post, http.StatusCreated, "The file written.", service.SchemaRef(schemaResult))
	service.AddErrors(post, append(service.CommonErrors, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable)...)
	put := *post
	put.OperationID = "replaceFile"
	del := service.NewOperation("deleteFile", "files", "Delete a file", "")
	del.AddParameter(fileParam.Value)
	service.AddResponse(del, http.StatusOK, "The file deleted.", service.SchemaRef(schemaResult))
	service.AddErrors(del, append(service.CommonErrors, http.StatusNotFound, http.StatusServiceUnavailable)...)
	service.AddOperation(doc, "/{file_path}", http.MethodGet, get)
	service.AddOperation(doc, "/{file_path}", http.MethodPost, post)
	service.AddOperation(doc, "/{file_path}", http.MethodPut, &put)
	service.AddOperation(doc, "/{file_path}", http.MethodDelete, del)
	return doc
}
