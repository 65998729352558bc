import PostgresWire
import WarmfeedCore

/// PostgreSQL's failures in an operator's words, naming the server.
enum PostgresProblem {
    /// Why connecting to (or querying) `location` failed; a deadline missed
    /// is said as "did not answer within `waited`" (the connect timeout unless given).
    static func explain(_ error: any Error, _ location: PostgresLocation, waited: Duration? = nil) -> String {
        let server = "PostgreSQL at \(location.host):\(location.port)"
        if let unavailable = error as? StoreUnavailable { return unavailable.description }
        guard let problem = error as? PQProblem else { return "\(server): \(error)" }
        if problem.timedOut { return "\(server) did not answer within \(waited ?? location.connectTimeout)" }
        if let state = problem.sqlState { return explain(state: state, message: problem.description, server: server, location) }
        // libpq says why a connection failed in words only (no SQLSTATE): the
        // server's FATAL message after "connection to server at … failed:".
        let text = problem.description
        let words: [(String, String)] = [
            ("password authentication failed", "28P01"),
            ("does not exist", "3D000"),
            ("no pg_hba.conf entry", "28000"),
            ("the database system is shutting down", "57P01"),
            ("the database system is starting up", "57P03"),
            ("the database system is not yet accepting connections", "57P03"),
        ]
        if let (_, state) = words.first(where: { text.contains($0.0) }) {
            if state != "3D000" || text.contains("database \"") { return explain(state: state, message: reason(text), server: server, location) }
            if text.contains("role \"") { return explain(state: "28000", message: reason(text), server: server, location) }
        }
        if text.contains("no password supplied") { return "\(server) asks user \"\(location.user)\" for a password, and the URL has none" }
        if text.contains("server does not support SSL") { return "\(server) does not offer TLS, and the URL says sslmode=require" }
        if text.contains("Connection refused") { return "cannot reach \(server): connection refused (is it running, on that port?)" }
        if text.contains("server closed the connection") || text.contains("terminating connection") { return "\(server) closed the connection" }
        return problem.connectionLost ? "cannot reach \(server): \(reason(text))" : "\(server): \(reason(text))"
    }

    private static func explain(state: String, message: String, server: String, _ location: PostgresLocation) -> String {
        switch state {
        case "28P01": "\(server) refused user \"\(location.user)\": wrong password"
        case "28000": "\(server) refused user \"\(location.user)\": \(message)"
        case "3D000": "\(server) has no database \"\(location.database)\" (create it, or name another in the URL)"
        case "57P01", "57P02", "57P03": "\(server) is shutting down or starting: \(message)"
        default: "\(server): \(message) (\(state))"
        }
    }

    /// libpq's message without its "connection to server at … failed:" lead,
    /// its "FATAL:" and its hints: the reason, on one line.
    private static func reason(_ text: String) -> String {
        var line = Substring(text.split(separator: "\n").first ?? Substring(text))
        if let failed = line.range(of: " failed: ") { line = line[failed.upperBound...] }
        for lead in ["FATAL:", "ERROR:"] where line.hasPrefix(lead) { line = line.dropFirst(lead.count) }
        return line.trimmingPrefix(while: \.isWhitespace).description
    }
}
