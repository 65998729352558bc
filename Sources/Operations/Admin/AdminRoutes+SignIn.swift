import HTTPServer

/// The admin door's answers: signing in (the form, or `/admin?token=`),
/// signing out, and the refusals.
extension AdminRoutes {
    /// The token offered for a session, and the browser sent on to `/admin`
    /// (303), so what stays in its history is the bare address.
    func signIn(_ request: Request, offering offered: [String]) -> Response {
        let now = clock.now
        switch door.offer(offered, by: request, now: now) {
        case .open:
            let id = door.sessions.open(now: now)
            return Response(
                status: 303,
                headers: [
                    HTTPField("Location", "/admin"), HTTPField("Cache-Control", "no-store"), HTTPField("Referrer-Policy", "no-referrer"),
                    HTTPField("Set-Cookie", Self.cookie(id, maxAge: Int(AdminSessions.lifetime), request: request)),
                ])
        case .refused:
            // A browser that posted the form is told its token was not right; any other 401 says nothing more.
            return refusal(request, status: 401, message: request.method == .post ? "That is not the admin token." : nil)
        case .wait(let seconds):
            return refusal(request, status: 429, message: Self.waitMessage(seconds), retryAfter: seconds)
        }
    }

    /// Ends every session the request's cookies name and clears the cookie;
    /// the browser is sent on to `/admin` (the sign-in form).
    func signOut(_ request: Request) -> Response {
        guard AdminDoor.isSameOrigin(request) else { return Self.crossSite }
        for id in request.cookies(named: AdminDoor.cookie) { door.sessions.close(id) }
        return Response(
            status: 303,
            headers: [
                HTTPField("Location", "/admin"), HTTPField("Cache-Control", "no-store"),
                HTTPField("Set-Cookie", Self.cookie("", maxAge: 0, request: request)),
            ])
    }

    /// The session cookie: `Secure` behind a TLS front (nginx says so), so it is never sent in the clear.
    private static func cookie(_ value: String, maxAge: Int, request: Request) -> String {
        let secure = request.header("X-Forwarded-Proto")?.lowercased() == "https" ? "; Secure" : ""
        return "\(AdminDoor.cookie)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=Strict\(secure)"
    }

    /// A request the door refused (401) or slowed (429): the sign-in form
    /// for a browser (with `message`, when there is one), else plain text.
    func refusal(_ request: Request, status: Int, message: String?, retryAfter: Int? = nil) -> Response {
        var headers = [HTTPField("WWW-Authenticate", "Bearer realm=\"warmfeed-admin\"")]
        if let retryAfter { headers.append(HTTPField("Retry-After", String(retryAfter))) }
        if request.header(.accept)?.contains("text/html") == true {
            let form = dashboardPage.signIn(message: message)
            return .html(HTTPResponse.Status(code: status), ResponseBytes(form), headers: pageHeaders + headers + [HTTPField("Cache-Control", "no-store")])
        }
        return .plain(HTTPResponse.Status(code: status), message ?? Self.refusedMessage, headers: headers)
    }

    /// What every 401 to a script says: how to offer the token, not what was wrong.
    static let refusedMessage =
        "admin token required: Authorization: Bearer <token>, or sign in at /admin in a browser"

    /// What a 429 says.
    static func waitMessage(_ seconds: Int) -> String {
        "Too many wrong admin tokens from this address: try again in \(seconds) s."
    }

    /// A form another site posted here.
    static let crossSite = Response.plain(403, "a form from another site cannot sign in or out here")
}
