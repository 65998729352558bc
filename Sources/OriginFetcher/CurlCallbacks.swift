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

    /// Opens the socket for each connection libcurl makes (CURLOPT_OPENSOCKETFUNCTION),
    /// after the fetch's `AddressPolicy` admitted the address it is about to
    /// connect to: the first hop's and each redirect's, each address it tries.
    /// A refused address gets CURL_SOCKET_BAD, so nothing is sent to it
    /// (libcurl tries the name's next address, or fails the transfer).
    /// `clientp` is the `Transfer` (CURLOPT_OPENSOCKETDATA), unretained as in `writeBody`.
    static let openSocket: curl_opensocket_callback = { clientp, _, address in
        guard let address, let clientp else { return CURL_SOCKET_BAD }
        let transfer = Unmanaged<Transfer>.fromOpaque(clientp).takeUnretainedValue()
        var port: Int32 = 0
        let admitted = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { buffer -> Bool in
            let count = Int(wf_socket_address(address, buffer.baseAddress, &port))
            let ip = IPAddress(bytes: UnsafeRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[..<count]))
            return transfer.admitsConnection(to: ip, port: Int(port))
        }
        // Sockets a child process does not inherit (see the shim).
        return admitted ? wf_open_socket_close_on_exec(address) : CURL_SOCKET_BAD
    }

    /// Asked before each request is sent (CURLOPT_PREREQFUNCTION), on a new
    /// connection or one kept from another transfer (which the open-socket
    /// callback never saw): the address it is connected to must be one the
    /// fetch's policy admits for this hop's host, or the transfer is aborted
    /// before a byte of the request goes out. `clientp` is the `Transfer`
    /// (CURLOPT_PREREQDATA), unretained as in `writeBody`.
    static let checkConnection: curl_prereq_callback = { clientp, primaryIP, _, primaryPort, _ in
        guard let clientp, let primaryIP else { return CURL_PREREQFUNC_ABORT }
        let transfer = Unmanaged<Transfer>.fromOpaque(clientp).takeUnretainedValue()
        let admitted = transfer.admitsConnection(to: IPAddress(String(cString: primaryIP)), port: Int(primaryPort))
        return admitted ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
    }
}
