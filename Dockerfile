# One image for every service of the pack platform. The service is chosen by the command:
#
#   docker build -t pack-platform .
#   docker run pack-platform                                                     # the gateway (default)
#   docker run pack-platform node --import tsx services/settings/src/main.ts     # any other service
#
# Services run from their TypeScript sources through tsx, so the image keeps the workspace's dev
# dependencies (tsx is one). Why: docs/decisions/0003-run-from-source.md.

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
RUN pnpm install --frozen-lockfile --offline

# ---- runtime: the sources and node_modules, without pnpm and its store -------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0
WORKDIR /app
# Owned by root and only readable by the `node` user: the running service cannot change its code.
COPY --from=build /app /app
USER node
# Default ports (DESIGN section 12, deploy/services.yaml): gateway 8080, catalog 8081, settings
# 8082, llm-gateway 8083, pipeline-orchestrator 8084, webhook-dispatcher 8085, each with /healthz
# and /readyz; and each service's internal metrics port (METRICS_PORT) 9080 ... 9085, with
# /metrics, for Prometheus only.
EXPOSE 8080 8081 8082 8083 8084 8085 9080 9081 9082 9083 9084 9085
CMD ["node", "--import", "tsx", "services/gateway/src/main.ts"]
