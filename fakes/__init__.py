"""Fake providers for the demo and the tests (installed with the `demo` extra: aiohttp).

`fakes.llm` speaks the OpenAI and Anthropic APIs (`python -m fakes.llm --port N`). The product
never imports this package (an import-linter contract in pyproject.toml), and the production
image leaves it out (.dockerignore).
"""
