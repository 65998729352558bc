// XMLStream: libxml2's SAX2 push parser (through the CXML2 shim) as a
// streaming, hostile-input-safe XML reader, knowing nothing of feeds.
//
// `XMLStreamParser` is fed chunks and calls an `XMLStreamHandler` with start
// tags, end tags, text and problems as it reads them: no DTDs, no external or
// declared entities, no network, bounded depth and attributes, and bytes that
// are not UTF-8 read as windows-1252 and reported once.
