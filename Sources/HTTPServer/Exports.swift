// The HTTP vocabulary is swift-http-types': fields, methods and statuses. Users
// of HTTPServer get it with `import HTTPServer`, as Hummingbird's users do.
@_exported import struct HTTPTypes.HTTPField
@_exported import struct HTTPTypes.HTTPFields
@_exported import struct HTTPTypes.HTTPRequest
@_exported import struct HTTPTypes.HTTPResponse
// The server's connection counts are a type of the layer below, which the
// operator's stats use too: users of HTTPServer get it with `import HTTPServer`.
@_exported import struct Reckoning.ConnectionCounts
