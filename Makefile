# glassbox: the two commands of the Quick start, and the rest.
#
#   make run     install what is missing, build, start glassbox serve (MCP over HTTP on
#                127.0.0.1:8931, tenant "local"; POLICY=FILE for its policy, CONFIG=FILE
#                for a service config instead)
#   make test    install what is missing, build, run the whole test suite (the last part,
#                make test-newcomer, follows the README literally: tests/newcomer.sh)
#   make test-postgres  the store's tests against a throwaway PostgreSQL
#   make cli-doc rewrite docs/cli.md from the binary's help
#   make pipeline-doc rewrite the table of docs/internals/pipeline.md from the tools
#   make demo    the example QA flows against the fixture shop, the JUnit file, the HTML
#                report and audit verify
#   make bench   the agent-loop benchmark against the peers and raw CDP

SHELL := /bin/bash
BUILD ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 4
FUZZERS := cdp/fuzz_cdp blob/fuzz_blob mcp/fuzz_jsonrpc mcp/fuzz_serve_config actions/fuzz_snapshot actions/fuzz_find \
	actions/fuzz_pagelog store/fuzz_risk store/fuzz_admin flows/fuzz_flow profiles/fuzz_profile policy/fuzz_policy \
	trace/fuzz_trace relay/fuzz_relay actions/fuzz_storage_state secrets/fuzz_secrets_env

DEBIAN_PACKAGES := build-essential pkg-config meson ninja-build libwebsockets-dev libmicrohttpd-dev libnl-route-3-dev \
	libjansson-dev libpng-dev libsodium-dev libxml2-dev libxml2-utils libsqlite3-dev libpq-dev postgresql \
	libcmocka-dev \
	libidn2-dev libarchive-dev libpcre2-dev libmagic-dev libcurl4-openssl-dev libwslay-dev haproxy chromium clang clang-format \
	libclang-rt-14-dev nodejs npm procps iproute2 util-linux unzip

.PHONY: all deps build run test test-unit test-postgres test-asan test-tsan test-fuzz test-http-fuzz test-node test-full test-drills test-replicas \
	test-conformance bench format format-check clean cli-doc pipeline-doc demo test-newcomer test-deploy

all: build

# Installs the Debian packages that are not there yet (root, or sudo).
deps:
	@missing=$$(for p in $(DEBIAN_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	command -v node >/dev/null && command -v npm >/dev/null && \
		missing=$$(echo $$missing | tr ' ' '\n' | grep -vx -e nodejs -e npm); \
	if [ -n "$$(echo $$missing)" ]; then \
		echo "installing: $$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -q --no-install-recommends $$missing; \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) -Dwerror=true

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

run: build
	@$(BUILD)/glassbox init >&2
	@echo >&2
	@echo "glassbox serve: MCP Streamable HTTP (Ctrl-C to stop; glassbox mcp serves stdio)." >&2
	@exec $(BUILD)/glassbox serve $(if $(CONFIG),--config $(CONFIG)) $(if $(POLICY),--policy $(POLICY))

test: build
	$(MAKE) format-check test-unit test-postgres test-asan test-tsan test-fuzz test-http-fuzz test-node \
		test-conformance test-newcomer

# What `make test` leaves out or short for time: the heavy drills of
# tests/drills.list (test-drills) and each fuzzer for a minute
# (FUZZ_LONG_SECONDS) instead of FUZZ_SECONDS. CI runs it after make test.
FUZZ_LONG_SECONDS ?= 60

test-full: build
	$(MAKE) test-drills test-fuzz FUZZ_SECONDS=$(FUZZ_LONG_SECONDS)

test-drills: build
	GLASSBOX_BIN=$(BUILD)/glassbox NODE_TESTS=drills tests/run-node-tests.sh

test-unit:
	meson test -C $(BUILD) --print-errorlogs

# The store's suites again, against a throwaway PostgreSQL server
# (tests/postgres/run.sh: initdb in a temp dir, a unix socket only). The
# replicas sharing one (tests/integration/store_replicas.test.mjs,
# replicas_profiles.test.mjs, replicas.test.mjs; each starts its own
# servers) are drills of test-full (tests/drills.list); test-replicas runs them alone.
PG_SUITES := approvals ledger segments gate admin profiles evidence

test-postgres: build
	tests/postgres/run.sh meson test -C $(BUILD) --print-errorlogs $(PG_SUITES)

test-replicas: build
	GLASSBOX_BIN=$(BUILD)/glassbox tests/run-node-tests.sh tests/integration/store_replicas.test.mjs \
		tests/integration/replicas_profiles.test.mjs tests/integration/replicas.test.mjs

$(ASAN_BUILD)/build.ninja:
	meson setup $(ASAN_BUILD) -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false

test-asan: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C $(ASAN_BUILD) --print-errorlogs

$(TSAN_BUILD)/build.ninja:
	meson setup $(TSAN_BUILD) -Dwerror=true -Db_sanitize=thread -Db_lundef=false

# ThreadSanitizer: the unit suites, then a short concurrent `glassbox serve`
# test (tests/tsan). Any report fails the target (exitcode 66); the
# suppressions name third-party code only.
TSAN_ENV := TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1 \
	suppressions=$(CURDIR)/tests/tsan/suppressions.txt"

test-tsan: $(TSAN_BUILD)/build.ninja
	ninja -C $(TSAN_BUILD)
	$(TSAN_ENV) meson test -C $(TSAN_BUILD) --print-errorlogs
	@sh tests/install-node-deps.sh
	$(TSAN_ENV) GLASSBOX_BIN=$(TSAN_BUILD)/glassbox node --test --test-reporter=spec tests/tsan/*.test.mjs

$(FUZZ_BUILD)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILD) -Dfuzz=enabled -Dtests=disabled

test-fuzz: $(FUZZ_BUILD)/build.ninja
	ninja -C $(FUZZ_BUILD)
	@for f in $(FUZZERS); do \
		echo "fuzzing $$f for $(FUZZ_SECONDS) s"; \
		$(FUZZ_BUILD)/$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
			> $(FUZZ_BUILD)/$$(basename $$f).log 2>&1 || { tail -n 40 $(FUZZ_BUILD)/$$(basename $$f).log; exit 1; }; \
		tail -n 3 $(FUZZ_BUILD)/$$(basename $$f).log; \
	done

# Bounded random clients against the listeners of the ASan-built
# glassbox serve (tests/fuzz/http_clients.test.mjs).
test-http-fuzz: $(ASAN_BUILD)/build.ninja
	ninja -C $(ASAN_BUILD) glassbox
	@sh tests/install-node-deps.sh
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		GLASSBOX_BIN=$(ASAN_BUILD)/glassbox node --test --test-reporter=spec tests/fuzz/http_clients.test.mjs

test-node: build
	GLASSBOX_BIN=$(BUILD)/glassbox tests/run-node-tests.sh

# The deployment files alone (test-node runs it too): the Kubernetes
# manifests against the API schemas and the restricted profile, and
# haproxy -c of deploy/haproxy/haproxy.cfg.
test-deploy:
	tests/run-node-tests.sh tests/e2e/deploy.test.mjs

# The official MCP conformance suite (server scenarios, 2025-11-25) against
# glassbox serve, with the Node 22 pinned in tests/conformance.
test-conformance: build
	GLASSBOX_BIN=$(BUILD)/glassbox tests/conformance/run.sh

# The example flows against the fixture shop: the site, a flow run, the
# JUnit file, the HTML report and audit verify (fixtures/demo.sh).
demo: build
	GLASSBOX_BIN=$(BUILD)/glassbox fixtures/demo.sh

# docs/cli.md is the binary's help (cli/help.c); the unit test cli_doc fails
# when they differ.
cli-doc: build
	$(BUILD)/glassbox help --markdown > docs/cli.md

# The table of docs/internals/pipeline.md is the tools' descriptors
# (`glassbox tools --markdown`); the unit test pipeline_doc fails when they
# differ.
pipeline-doc: build
	{ sed '/^<!-- generated by glassbox tools --markdown -->$$/q' docs/internals/pipeline.md; \
	  $(BUILD)/glassbox tools --markdown; \
	  sed -n '/^<!-- end of generated table -->$$/,$$p' docs/internals/pipeline.md; } > docs/internals/pipeline.md.new
	mv docs/internals/pipeline.md.new docs/internals/pipeline.md

# What the README tells a new user to do, literally, from a clean data dir
# (serve listens on 127.0.0.1:8931, which must be free).
test-newcomer: build
	GLASSBOX_BIN=$(BUILD)/glassbox tests/newcomer.sh

bench: build
	bench/run.sh
	bench/run.sh serve

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# Fails, naming the files, when C code does not follow .clang-format.
format-check:
	@bad=$$(for f in $$(git ls-files '*.c' '*.h'); do \
		clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "$$f"; \
	done); \
	if [ -n "$$bad" ]; then \
		echo "format-check: not formatted as .clang-format says (run make format):" $$bad >&2; \
		exit 1; \
	fi

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
