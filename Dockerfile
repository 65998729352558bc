# Warmfeed: a Swift build stage, then a slim Debian runtime with only the
# shared libraries the binary links (the Swift runtime is linked in statically).
#
#   docker build -t warmfeed .
#   docker run -p 8080:8080 -v warmfeed-data:/data warmfeed
#
# docker-compose.yml runs the cluster: nginx, three nodes, Redis, PostgreSQL
# and the demo origin, all from this image but nginx, Redis and PostgreSQL.

# Swift 6.3, as the tests are built with; nothing older than 6.2 can build it at
# all: swift-log, swift-metrics, swift-prometheus and swift-service-lifecycle,
# at the versions Package.swift asks for, declare swift-tools-version 6.2.
FROM swift:6.3-bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      pkg-config libcurl4-openssl-dev libvips-dev libsqlite3-dev \
      libxml2-dev zlib1g-dev libdeflate-dev libisal-dev libhiredis-dev libpq-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The manifest first: the dependencies resolve in a layer of their own.
COPY Package.swift ./
RUN swift package resolve
COPY Sources ./Sources
COPY Tests ./Tests
RUN swift build -c release --product warmfeed --static-swift-stdlib \
 && cp "$(swift build -c release --show-bin-path)/warmfeed" /usr/local/bin/warmfeed

FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libvips42 libsqlite3-0 libxml2 zlib1g libdeflate0 libisal2 libhiredis0.14 libpq5 \
      ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /data --shell /usr/sbin/nologin warmfeed \
 && mkdir -p /data && chown warmfeed /data
COPY --from=build /usr/local/bin/warmfeed /usr/local/bin/warmfeed
COPY Templates /srv/warmfeed/Templates
COPY Public /srv/warmfeed/Public
WORKDIR /srv/warmfeed
USER warmfeed
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["warmfeed"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--data", "/data"]
