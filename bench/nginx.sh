# Sourced by the benches that run nginx (the peer beside warmfeed, or an
# origin for it): what all their nginx configurations share, in one place.
#
#   nginx_conf DIR WORKERS HTTP [MAIN]
#       writes DIR/nginx.conf: WORKERS worker processes, the pid file, the
#       error log (NGINX_ERRORS, warn) and the temporary files under DIR, no
#       access log, NGINX_CONNECTIONS (4096) connections a worker; then MAIN
#       (more lines for the main context) and HTTP (the http block's own lines:
#       tuning and servers).
#   nginx_static   http lines for a static-file peer at its best: sendfile,
#                  long keep-alive, the open-file cache.
#   nginx_page     lines for a location that answers as warmfeed's pages do:
#                  their type and the headers warmfeed sends with them.
nginx_conf() {
  local dir=$1 workers=$2 http=$3 main=${4:-}
  mkdir -p "$dir/tmp"
  cat >"$dir/nginx.conf" <<CONF
worker_processes $workers;
$main
pid $dir/nginx.pid;
error_log $dir/error.log ${NGINX_ERRORS:-warn};
events { worker_connections ${NGINX_CONNECTIONS:-4096}; }
http {
    access_log off;
    server_tokens off;
    client_body_temp_path $dir/tmp/body; proxy_temp_path $dir/tmp/proxy; fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi; scgi_temp_path $dir/tmp/scgi;
$http
}
CONF
}

nginx_static() {
  cat <<CONF
    sendfile ${NGINX_SENDFILE:-on};
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65;
    keepalive_requests 1000000;
    open_file_cache max=10000 inactive=120s;
    open_file_cache_valid 120s;
    open_file_cache_min_uses 1;
    open_file_cache_errors on;
CONF
}

nginx_page() {
  local csp="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
  cat <<CONF
            types { }
            default_type "text/html; charset=utf-8";
            add_header Content-Security-Policy "$csp" always;
            add_header Referrer-Policy "same-origin" always;
            add_header Cache-Control "no-cache" always;
            add_header Vary "Accept-Encoding" always;
            add_header Accept-CH "Sec-CH-DPR" always;
            add_header X-Content-Type-Options "nosniff" always;
CONF
}
