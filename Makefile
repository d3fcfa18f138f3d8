.PHONY: check test serve bench captures conversation-captures
check:  ## lint, type-check and run the tests that start no process (about a minute; no root, no network)
	./scripts/check

test:  ## install what the tests need, then lint, type-check and run the whole suite
	./scripts/test

serve:  ## run the service on the embedded default config
	python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/otelgrade serve

bench:  ## end-to-end throughput against the decode floor (prints a table; see bench/run.py; after make check or test)
	.venv-test/bin/python -m bench.run

captures:  ## re-capture every framework (builds each one's pinned environment), then regenerate the README table
	.venv-test/bin/python tests/capture/harness.py --all
	.venv-test/bin/python tests/capture/compat_table.py

conversation-captures:  ## re-capture the multi-turn conversations (tests/fixtures/conversations)
	for source in tests/capture/conversations/*/; do \
		.venv-test/bin/python tests/capture/harness.py --out tests/fixtures/conversations conversations/$$(basename $$source) || exit 1; \
	done
