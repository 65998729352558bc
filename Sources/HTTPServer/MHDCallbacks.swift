import CMicroHTTPD
import Glibc
import HTTPTypes

/// The C callbacks handed to libmicrohttpd.
///
/// They are `static let`s of a type that is not actor-isolated: a closure in
/// `main.swift` would be main-actor isolated and crash when libmicrohttpd calls
/// it from its own threads (see docs/C-INTEROP.md).
enum MHDCallbacks {
    /// Called once per request with the raw target, before headers are parsed.
    /// Its return value becomes the request's `req_cls`: a `RequestContext`
    /// retained here and released in `completed`.
    static let uriLog: wf_uri_log_callback = { cls, uri, connection in
        if let cls, let connection {
            Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().requestStarted(connection)
        }
        let context = RequestContext(rawTarget: uri.map { String(cString: $0) } ?? "")
        if let uri {
            // Where the target ends as libmicrohttpd holds it, to find a NUL that cut it short.
            context.rawTargetEnd = Int(bitPattern: uri) + strlen(uri)
            // The query is parsed from `rawTarget` (RequestTarget), never from
            // libmicrohttpd's argument table; so its own parse, which runs
            // right after this callback, is given an empty query. That saves a
            // header record per argument in the connection's memory pool, and
            // with it the silent close libmicrohttpd 0.9.75 makes when a few
            // hundred `&` exhaust that pool (its 431 is lost to a state reset).
            // `uri` points into libmicrohttpd's own writable read buffer.
            if let question = strchr(uri, Int32(UInt8(ascii: "?"))), question[1] != 0 {
                UnsafeMutablePointer(mutating: question)[1] = 0
            }
        }
        return Unmanaged.passRetained(context).toOpaque()
    }

    /// The access handler: libmicrohttpd calls it when headers arrive, for each
    /// piece of body, once more when the request is complete, and again after a
    /// resume. `cls` is the `ServerCore`, kept alive by `HTTPServer` for as long
    /// as the daemon runs.
    static let access: MHD_AccessHandlerCallback = { cls, connection, _, method, version, uploadData, uploadDataSize, reqCls in
        guard let cls, let connection, let reqCls, let raw = reqCls.pointee else { return .NO }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        return core.handle(
            connection: connection,
            context: context,
            method: method.map { String(cString: $0) } ?? "GET",
            version: version,
            uploadData: uploadData,
            uploadDataSize: uploadDataSize
        )
    }

    /// Releases the request's context: the one release that matches `uriLog`'s retain.
    static let completed: MHD_RequestCompletedCallback = { cls, connection, reqCls, _ in
        if let cls, let connection {
            let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
            core.requestEnded(connection)
            core.requestAnswered(connection)
        }
        guard let reqCls, let raw = reqCls.pointee else { return }
        Unmanaged<RequestContext>.fromOpaque(raw).release()
        reqCls.pointee = nil
    }

    /// Tells the core a connection opened or closed, so it can bound and shed them.
    static let notifyConnection: wf_notify_connection_callback = { cls, connection, socketContext, code in
        guard let cls, let connection else { return }
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        // MHD_CONNECTION_NOTIFY_STARTED is 0, MHD_CONNECTION_NOTIFY_CLOSED is 1.
        switch code.rawValue {
        case 0: core.connectionOpened(connection, socketContext: socketContext)
        case 1: core.connectionClosed(connection)
        default: break
        }
    }

    /// Releases a response body when libmicrohttpd frees the response that sent it.
    static let releaseBody: MHD_ContentReaderFreeCallback = { cls in
        guard let cls else { return }
        Unmanaged<ResponseBytes>.fromOpaque(cls).release()
    }

    /// Reads each header line once into the `HeadLines` that `cls` points to:
    /// noted as sent for the RFC 9112 rules, and kept for the request's fields.
    static let readHeader: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let lines = cls.assumingMemoryBound(to: HeadLines.self)
        let length = lines.pointee.head.note(name: key, value: value)
        guard lines.pointee.keepsFields else { return .YES }
        // libmicrohttpd has checked the line; a name that is still not a token is left out.
        lines.pointee.fields.append(name: key, nameCount: length.name, value: value, valueCount: length.value)
        return .YES
    }
}
