// Operations: what the operator sees. `/admin/cache` (JSON), the dashboard
// (`/admin`) and `/metrics` (Prometheus) all read one `CacheStats`, which
// `CacheObserver` gathers from the parts' `StatsPublisher`s, adding the
// process's memory (`SystemMemory`: `Allocator`, `ProcessMemory`) and the HTTP server's
// connections. It imports no feature: features publish into the seam.
