"""The LLM machinery that knows nothing of judging: endpoints, provider clients over the official
SDKs, the call cache, the run/unit engine, the per-endpoint concurrency limit, the fake server."""
