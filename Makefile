# The two commands a newcomer runs (see README):
#   make demo   set up .venv and attribute a real answer with the embedded model
#   make test   set up .venv (+ dev tools, integrations, vLLM) and run lint, types and tests
.PHONY: demo test lint

# Python may write bytecode into the environments setup.sh makes (.venv, .venv-vllm): where
# PYTHONDONTWRITEBYTECODE is set, every process compiles torch (or vLLM) again, and setup's
# check that vLLM imports would leave the server's start nothing to reuse.
unexport PYTHONDONTWRITEBYTECODE

# Tests are type-checked too, but test functions and fixtures may go unannotated: these
# flags relax every module, and pyproject.toml pins the packages back to strict, so all of
# the repository is one mypy configuration with one cache (.mypy_cache). Three runs only
# because three test folders are top-level modules, each with its own conftest.py.
TEST_TYPING = --allow-untyped-defs --allow-incomplete-defs --allow-untyped-calls \
	--check-untyped-defs --no-strict-equality --no-warn-unused-ignores
MYPY = .venv/bin/mypy $(TEST_TYPING)

demo:
	scripts/setup.sh demo
	.venv/bin/camab demo

lint:
	.venv/bin/python scripts/check_commits.py
	.venv/bin/ruff check camab_rag tools tests integrations benchmarks cookbook
	.venv/bin/ruff format --check camab_rag tools tests integrations benchmarks cookbook
	$(MYPY) camab_rag tools/camab-cli/camab_cli integrations/langchain-camab/langchain_camab \
		integrations/llama-index-postprocessor-camab/llama_index \
		integrations/llama-index-llms-camab/llama_index \
		integrations/llama-index-embeddings-camab/llama_index benchmarks tests \
		integrations/langchain-camab/tests
	MYPYPATH=tools/camab-cli/tests $(MYPY) tools/camab-cli/tests
	MYPYPATH=integrations/llama-index-postprocessor-camab/tests $(MYPY) \
		integrations/llama-index-postprocessor-camab/tests \
		integrations/llama-index-llms-camab/tests/test_llms_camab.py \
		integrations/llama-index-embeddings-camab/tests/test_embeddings_camab.py

# lint runs inside run_tests.sh, as one of the short steps that fill the tail after the
# long suites (see scripts/run_tests.sh)
test:
	scripts/setup.sh test
	MAKE="$(MAKE)" scripts/run_tests.sh --lint
