"""Backend `openai`: `/v1/completions` with streaming on one or many OpenAI-compatible servers.

Works with `vllm serve`, llm-d and KServe on this host or others. Prompts go out as token-id lists and
the generated ids come back in each chunk (`return_token_ids`, vLLM 0.10.2 and later); text is never
re-encoded into ids. A chat with images (qwen3-vl-235b-a22b) goes to `/v1/chat/completions` as the
reference sends it, its messages and inline images untouched; audio is not sent (use backend `vllm`).
Each request goes to the server with the fewest requests outstanding. What each
endpoint serves (`GET /v1/models`, and vLLM's `GET /version` where the server has it) is recorded in
run.json's versions, so a run against a gateway (llm-d) says what answered it.

Arguments (`engine_args`): `endpoints` (base URLs, required), `served_model_name` (default: the
descriptor's model_path), `max_connections` per server (default 4096), `request_timeout_s`
(default 600), `extra_body` (merged into every request).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field

from harness.engines.base import CompletionEvents, EngineSpec, Generation, Sample
from harness.engines.event_loop import SampleLoop
from harness.media import AudioClip, ImageChat


class OpenAIArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    endpoints: list[str] = Field(min_length=1)
    served_model_name: str | None = None
    max_connections: int = Field(default=4096, gt=0)
    request_timeout_s: float = Field(default=600.0, gt=0)
    extra_body: dict[str, Any] = Field(default_factory=dict)


class ServerError(Exception):
    pass


class _Endpoint:
    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/v1/completions"
        self.chat_url = self.base_url + "/v1/chat/completions"
        self.outstanding = 0


def endpoint_identity(base_url: str, timeout_s: float = 10.0) -> str:
    """What an OpenAI-compatible server says it serves: its model ids, and its vLLM version if it tells."""
    parts = []
    try:
        with httpx.Client(timeout=timeout_s) as client:
            models = client.get(f"{base_url}/v1/models")
            if models.status_code == 200:
                served = [str(entry.get("id")) for entry in models.json().get("data", [])]
                parts.append(f"models {', '.join(served) or 'none'}")
            else:
                parts.append(f"GET /v1/models: HTTP {models.status_code}")
            version = client.get(f"{base_url}/version")
            if version.status_code == 200 and isinstance(version.json(), dict):
                parts.append(f"version {version.json().get('version')}")
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        parts.append(f"not identified ({type(exc).__name__})")
    return "; ".join(parts)


class OpenAIEngine:
    def __init__(self, spec: EngineSpec) -> None:
        self._args = OpenAIArgs.model_validate(spec.args)
        self._model = self._args.served_model_name or spec.model
        self.use_generation(spec.generation)
        self._endpoints = [_Endpoint(url) for url in self._args.endpoints]
        self._loop = SampleLoop("openai-loop")
        self._client: httpx.AsyncClient | None = None
        self._identities: dict[str, str] = {}

    def start(self) -> None:
        self._loop.start()
        limit = self._args.max_connections * len(self._endpoints)

        async def build() -> httpx.AsyncClient:
            return httpx.AsyncClient(
                limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
                timeout=httpx.Timeout(self._args.request_timeout_s, connect=30.0),
            )

        self._client = self._loop.call(build)
        self._identities = {
            endpoint.base_url: endpoint_identity(endpoint.base_url) for endpoint in self._endpoints
        }

    def use_generation(self, generation: Generation) -> None:
        self._body = {
            "model": self._model,
            "max_tokens": generation.max_tokens,
            "min_tokens": generation.min_tokens,
            "temperature": generation.temperature,
            "top_k": generation.top_k,
            "top_p": generation.top_p,
            "seed": generation.seed,
            "ignore_eos": generation.ignore_eos,
            "stream": True,
            "return_token_ids": True,
            **self._args.extra_body,
        }

    def submit(self, samples: Sequence[Sample], events: CompletionEvents) -> None:
        self._loop.submit(samples, lambda sample: self._request(sample, events))

    def flush(self) -> None:
        """Requests go out as samples arrive; nothing is held back."""

    def stop(self) -> None:
        async def close() -> None:
            if self._client is not None:
                await self._client.aclose()

        self._loop.stop(close)

    def versions(self) -> dict[str, str]:
        return {
            "httpx": httpx.__version__,
            **{f"endpoint {url}": found for url, found in self._identities.items()},
        }

    def _request_body(self, sample: Sample, endpoint: _Endpoint) -> tuple[str, dict[str, Any]]:
        if isinstance(sample.media, ImageChat):
            return endpoint.chat_url, {**self._body, "messages": list(sample.media.messages)}
        if isinstance(sample.media, AudioClip):
            raise ServerError("the openai backend does not send audio; use backend vllm")
        return endpoint.url, {**self._body, "prompt": list(sample.prompt)}

    def _least_loaded(self) -> _Endpoint:
        return min(self._endpoints, key=lambda endpoint: endpoint.outstanding)

    async def _request(self, sample: Sample, events: CompletionEvents) -> None:
        assert self._client is not None
        endpoint = self._least_loaded()
        endpoint.outstanding += 1
        generated: list[int] = []
        try:
            url, body = self._request_body(sample, endpoint)
            async with self._client.stream("POST", url, json=body) as response:
                if response.status_code != 200:
                    detail = (await response.aread()).decode(errors="replace")[:300]
                    raise ServerError(f"HTTP {response.status_code} from {endpoint.url}: {detail}")
                async for line in response.aiter_lines():
                    new_tokens = _token_ids(line, url)
                    if new_tokens is None:
                        break
                    if new_tokens and not generated:
                        events.first_token(sample.id, new_tokens[:1])
                    generated.extend(new_tokens)
        except (httpx.HTTPError, ServerError) as exc:
            events.fail(sample.id, f"{type(exc).__name__}: {exc}")
            return
        finally:
            endpoint.outstanding -= 1
        events.complete(sample.id, generated)


def _token_ids(line: str, url: str) -> list[int] | None:
    """The new token ids in one server-sent-events line; [] for lines without any, None at the end."""
    if not line.startswith("data:"):
        return []
    payload = line[len("data:") :].strip()
    if payload == "[DONE]":
        return None
    try:
        chunk = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise ServerError(f"{url} sent a chunk that is not JSON: {payload[:100]!r}") from exc
    if "error" in chunk:
        raise ServerError(f"{url} reported an error: {chunk['error']}")
    ids: list[int] = []
    for choice in chunk.get("choices") or []:
        if choice.get("token_ids") is None:
            # A chat stream opens with the assistant's role and no tokens yet.
            opening = "delta" in choice and not (choice["delta"] or {}).get("content")
            if choice.get("text") or (choice.get("finish_reason") is None and not opening):
                raise ServerError(
                    f"{url} streams text without token ids; the harness needs return_token_ids (vLLM "
                    "0.10.2 or later): re-encoding text would report tokens the model did not make"
                )
            continue
        ids.extend(choice["token_ids"])
    return ids
