# leadflow's production image: leadflow-ingest, leadflow-worker and leadflow-admin on Debian 12.
#
#   docker build --build-arg LEADFLOW_COMMIT=$(git rev-parse HEAD) -t registry.example.com/leadflow:1.0.0 .
#
# The builder installs the build dependencies with scripts/deps.sh (the same packages as a
# developer's machine, Node and npm included) and builds with scripts/build.sh in Release, without
# the tests. The web dashboard (ingest/web) is built by Vite from the npm packages its
# package-lock.json pins and embedded in leadflow-ingest, so the image needs no file beside it;
# the builder fails rather than ship an image without it. The
# runtime stage holds only the shared libraries those three binaries load, CA certificates and
# the time-zone database (buyer schedules), and runs as an unprivileged user with a fixed uid so
# that Kubernetes can check runAsNonRoot. Nothing is written under / at run time: point
# LEADFLOW_DATA_DIR and TMPDIR at volumes (k8s/base mounts emptyDirs on /var/lib/leadflow and
# /tmp), and the root filesystem can be mounted read-only.

ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${DEBIAN_IMAGE} AS build
# The build context leaves .git out, so the commit the image is built from is given here
# (docker build --build-arg LEADFLOW_COMMIT=$(git rev-parse HEAD) .); leadflow_build_info
# reports it, and "unknown" without it.
ARG LEADFLOW_COMMIT=unknown
WORKDIR /src
# Dependencies first, in a layer of their own: it is rebuilt only when deps.sh changes.
COPY scripts/deps.sh scripts/deps.sh
RUN scripts/deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# File by file, as the benchmarks build (docs/benchmarks.md): the unity build is for the tests.
RUN LEADFLOW_BUILD_DIR=/build LEADFLOW_BUILD_TYPE=Release LEADFLOW_BUILD_TESTS=OFF LEADFLOW_UNITY_BUILD=OFF \
      LEADFLOW_BUILD_COMMIT="$LEADFLOW_COMMIT" scripts/build.sh --target leadflow-ingest leadflow-worker leadflow-admin \
 && ! grep -q 'kDashboardFileCount = 0;' /build/ingest/app/dashboard_files.cpp \
 && install -D -m 0755 -t /out/usr/local/bin \
      /build/ingest/leadflow-ingest /build/workers/leadflow-worker /build/ingest/leadflow-admin

FROM ${DEBIAN_IMAGE} AS runtime
ARG LEADFLOW_COMMIT=unknown
LABEL org.opencontainers.image.revision=$LEADFLOW_COMMIT
# The runtime halves of the -dev packages scripts/deps.sh installs (OpenSSL, libcurl, nghttp2,
# libpq, librdkafka, SQLite, simdjson, prometheus-cpp, jemalloc, libsodium, brotli, zlib).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates tzdata \
      libssl3 libcurl4 libnghttp2-14 libpq5 librdkafka1 libsqlite3-0 libsimdjson14 \
      libprometheus-cpp-core1.0 libjemalloc2 libsodium23 libbrotli1 zlib1g libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 leadflow \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/leadflow --no-create-home \
      --shell /usr/sbin/nologin leadflow \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/leadflow
COPY --from=build /out/ /
# Fails the image build if a library the binaries need is missing from this stage.
RUN for b in leadflow-ingest leadflow-worker leadflow-admin; do \
      if ldd "/usr/local/bin/$b" | grep -q 'not found'; then ldd "/usr/local/bin/$b"; exit 1; fi; \
    done
ENV LEADFLOW_DATA_DIR=/var/lib/leadflow \
    TMPDIR=/tmp
WORKDIR /var/lib/leadflow
# Numeric, so that runAsNonRoot can be checked without reading /etc/passwd.
USER 10001:10001
# 8443: the TLS listener (LEADFLOW_LISTEN); 9464: /metrics, /healthz, /readyz
# (LEADFLOW_METRICS_LISTEN).
EXPOSE 8443 9464
ENTRYPOINT ["leadflow-ingest"]
