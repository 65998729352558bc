import CCurl

/// The C callbacks handed to libcurl.
///
/// They are `static let`s of a type that is not actor-isolated, so they carry
/// no isolation libcurl's thread could violate (see docs/C-INTEROP.md). libcurl
/// calls them only from inside `curl_multi_perform`, on the transfer thread.
enum CurlCallbacks {
    /// Receives body bytes. `userdata` is the `Transfer` (CURLOPT_WRITEDATA),
    /// passed unretained: `TransferLoop` retains every transfer in its table for
    /// as long as its easy handle is in the multi, and removes the handle
    /// before it lets the transfer go, so the pointer is valid here.
    /// Answering anything but the byte count aborts the transfer with
    /// CURLE_WRITE_ERROR, which is how the body limit cuts a body that has no
    /// `Content-Length` or lied about it.
    static let writeBody: curl_write_callback = { data, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        return transfer.receive(UnsafeRawBufferPointer(start: data, count: size * count))
    }

    /// Receives one response header line (the status line and the blank line
    /// that ends the headers included), for every response of a redirect
    /// chain. `userdata` is the `Transfer` (CURLOPT_HEADERDATA), unretained for
    /// the same reason as in `writeBody`. Set for downloads only.
    static let receiveHeader: curl_write_callback = { data, size, count, userdata in
        guard let userdata else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        transfer.receiveHeader(UnsafeRawBufferPointer(start: data, count: size * count))
        return size * count
    }
}
