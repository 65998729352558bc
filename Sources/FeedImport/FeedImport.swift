// FeedImport: reading sources into entries, knowing nothing of C or the store.
//
// JSON Feed 1.0/1.1 (`JSONFeedParser`, streaming one item at a time), RSS
// 0.91–2.0, RSS 1.0 and Atom (`XMLFeedParser` over `XMLStream`), and folders
// of images (`ImageFolder`) become `RawEntry`s; `EntryBuilder` gives every
// format the same rules (plain text, http(s)-only URLs, dates, keys) and makes
// `ImportedEntry`s. `FeedReader` picks the parser from the bytes. Every byte is
// untrusted, and a malformed stretch is reported while the entries around it
// still import.
//
// `Lists/` reads the lists that name sources: `SourceList.read` tells an OPML
// list, a plain list (one address a line) and a feed apart
// (`SourceListKind.sniff`) and gives each source a list names as a
// `ListedSource`. Unlike a feed, a list is used whole or not at all.
