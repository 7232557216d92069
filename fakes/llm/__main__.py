"""python -m fakes.llm [--host H] [--port P] [--draw]"""

from __future__ import annotations

import argparse

from aiohttp import web

from . import create_app


def main() -> None:
    parser = argparse.ArgumentParser(description="Local OpenAI/Anthropic-compatible fake server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--draw",
        action="store_true",
        help="answer structured requests with any value their JSON schema allows (needs the "
        "test dependencies hypothesis and hypothesis-jsonschema)",
    )
    args = parser.parse_args()
    print(f"Fake LLM server on http://{args.host}:{args.port} (OpenAI: /v1, Anthropic: /)")
    web.run_app(
        create_app(draw=args.draw),
        host=args.host,
        port=args.port,
        print=None,
        backlog=1024,
        access_log=None,
    )


if __name__ == "__main__":
    main()
