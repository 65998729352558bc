// The HTTP vocabulary is swift-http-types': fields, methods and statuses. Users
// of HTTPServer get it with `import HTTPServer`, as Hummingbird's users do.
@_exported import struct HTTPTypes.HTTPField
@_exported import struct HTTPTypes.HTTPFields
@_exported import struct HTTPTypes.HTTPRequest
@_exported import struct HTTPTypes.HTTPResponse
