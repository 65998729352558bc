import NIOCore
import PostgresNIO
import WarmfeedCore

/// PostgreSQL's failures in an operator's words, naming the server.
enum PostgresProblem {
    /// Why connecting to (or querying) `location` failed.
    static func explain(_ error: any Error, _ location: PostgresLocation) -> String {
        let server = "PostgreSQL at \(location.host):\(location.port)"
        if let unavailable = error as? StoreUnavailable { return unavailable.description }
        guard let psql = error as? PSQLError else { return "\(server): \(error)" }
        if let state = psql.serverInfo?[.sqlState] {
            let message = psql.serverInfo?[.message] ?? "error \(state)"
            switch state {
            case "28P01": return "\(server) refused user \"\(location.user)\": wrong password"
            case "28000": return "\(server) refused user \"\(location.user)\": \(message)"
            case "3D000": return "\(server) has no database \"\(location.database)\" (create it, or name another in the URL)"
            case "57P01", "57P02", "57P03": return "\(server) is shutting down or starting: \(message)"
            default: return "\(server): \(message) (\(state))"
            }
        }
        switch psql.code {
        case .connectionError:
            let reason = psql.underlying.map { "\($0)" } ?? "no connection"
            if reason.contains("refused") || reason.contains("ECONNREFUSED") {
                return "cannot reach \(server): connection refused (is it running, on that port?)"
            }
            if reason.lowercased().contains("timeout") || reason.lowercased().contains("timed out") {
                return "\(server) did not answer within \(location.connectTimeout)"
            }
            return "cannot reach \(server): \(reason)"
        case .serverClosedConnection, .clientClosedConnection:
            return "\(server) closed the connection"
        case .authMechanismRequiresPassword:
            return "\(server) asks user \"\(location.user)\" for a password, and the URL has none"
        case .sslUnsupported:
            return "\(server) does not offer TLS, and the URL says sslmode=require"
        default:
            return "\(server): \(psql.code)"
        }
    }
}
