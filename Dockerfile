# One image for every service of the pack platform. The service is chosen by the command:
#
#   docker build -t pack-platform .
#   docker run pack-platform                                                     # the gateway (default)
#   docker run pack-platform node services/settings/dist/main.js                  # any other service
#
# Each service runs with plain node from one compiled JavaScript file, services/<name>/dist/main.js
# (`pnpm build`: esbuild bundles its sources and libraries), and the image keeps production
# dependencies only. Why: docs/decisions/0050-compiled-services.md (it revisits 0003).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: install every workspace package's dependencies from the lockfile ------------------
FROM ${NODE_IMAGE} AS build
ENV CI=true
RUN npm i -g pnpm@10.34.9
WORKDIR /app
# Download first, from the lockfile alone, so a source change does not download everything again.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch
COPY . .
# Then the operator console the gateway serves at / (packages/console/dist; never committed), the
# services' bundles (services/*/dist), and the dev dependencies dropped (production ones only:
# what the bundles leave out, e.g. swagger-ui-dist's assets).
RUN pnpm install --frozen-lockfile --offline && pnpm --filter @pack/console build && pnpm build \
  && pnpm install --frozen-lockfile --offline --prod

# ---- runtime: the bundles and production node_modules, without pnpm and its store ---------------
FROM ${NODE_IMAGE} AS runtime
# glibc's allocator gives freed memory back (fixed mmap and trim thresholds, two arenas; mmap from
# 32 KB, the size of V8's compiler segments): 20 MB less resident per service once loaded
# (docs/decisions/0050; bench/crash-scenario/runtime.ts sets the same).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=32768 \
    MALLOC_TRIM_THRESHOLD_=131072
WORKDIR /app
# Owned by root and only readable by the `node` user: the running service cannot change its code.
COPY --from=build /app /app
# The `node` user of the base image, by number: Kubernetes' runAsNonRoot can only verify a uid.
USER 1000:1000
# Default ports (DESIGN section 12, deploy/services.yaml): gateway 8080, catalog 8081, settings
# 8082, llm-gateway 8083, pipeline-orchestrator 8084, webhook-dispatcher 8085, each with /healthz
# and /readyz; and each service's internal metrics port (METRICS_PORT) 9080 ... 9085, with
# /metrics, for Prometheus only.
EXPOSE 8080 8081 8082 8083 8084 8085 9080 9081 9082 9083 9084 9085
# Alive when /healthz answers on the service's main port. The image serves every service, so the
# port comes from PORT (docker-compose.yml and the manifests set it for each service; the default
# 8080 is the default command's gateway): `docker run -e PORT=8082 ... settings/dist/main.js`.
# Compose overrides this with /readyz for its start order; Kubernetes ignores it (probes instead).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# A 2 MB young generation and V8's smaller heap growing steps (every service: 0050).
CMD ["node", "--max-semi-space-size=2", "--optimize-for-size", "services/gateway/dist/main.js"]
