# The two commands a newcomer runs (see README):
#   make demo   set up .venv and attribute a real answer with the embedded model
#   make test   set up .venv (+ dev tools, integrations, vLLM) and run lint, types and tests
.PHONY: demo test lint

# Tests are type-checked too, but test functions and fixtures may go unannotated. Each mypy
# run keeps its own cache: runs with different flags sharing one cache rebuild it each time.
TEST_TYPING = --allow-untyped-defs --allow-incomplete-defs --allow-untyped-calls \
	--check-untyped-defs --no-strict-equality --no-warn-unused-ignores

demo:
	scripts/setup.sh demo
	.venv/bin/camab demo

lint:
	.venv/bin/python scripts/check_commits.py
	.venv/bin/ruff check camab_rag tools tests integrations benchmarks cookbook
	.venv/bin/ruff format --check camab_rag tools tests integrations benchmarks cookbook
	.venv/bin/mypy --cache-dir .mypy_cache/lib camab_rag tools/camab-cli/camab_cli \
		integrations/langchain-camab/langchain_camab benchmarks
	.venv/bin/mypy --cache-dir .mypy_cache/tests $(TEST_TYPING) tests \
		integrations/langchain-camab/tests
	.venv/bin/mypy --cache-dir .mypy_cache/tests $(TEST_TYPING) tools/camab-cli/tests
	cd integrations/llama-index-postprocessor-camab && \
		MYPYPATH=../.. ../../.venv/bin/mypy --cache-dir ../../.mypy_cache/llama \
			-p llama_index.postprocessor.camab && \
		MYPYPATH=../.. ../../.venv/bin/mypy --cache-dir ../../.mypy_cache/llama-tests \
			$(TEST_TYPING) tests

test:
	scripts/setup.sh test
	$(MAKE) lint
	scripts/run_tests.sh
