"""python -m fakes.prolific [--host H] [--port P] [--token T]"""

from __future__ import annotations

import argparse

from aiohttp import web

from .server import create_app


def main() -> None:
    parser = argparse.ArgumentParser(description="Local fake of Prolific's researcher API")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument(
        "--token", default="", help="the only API token accepted (default: any non-empty one)"
    )
    args = parser.parse_args()
    print(f"Fake Prolific on http://{args.host}:{args.port} (API: /api/v1/)", flush=True)
    web.run_app(
        create_app(token=args.token), host=args.host, port=args.port, print=None, access_log=None
    )


if __name__ == "__main__":
    main()
