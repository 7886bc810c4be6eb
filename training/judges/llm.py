"""Rubric judges that ask a language model: a local GGUF in llama.cpp, or an OpenAI-compatible endpoint."""

from __future__ import annotations

import json
import os
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import InputError, ModelError
from engine.llm.backend import GenRequest
from engine.llm.runtime import LlamaRuntime
from engine.models.registry import bundled_model_path
from training.judges.rubric import (
    DIMENSIONS,
    SCORE_SCHEMA,
    Scores,
    empty_reply,
    judge_messages,
    parse_scores,
)

if TYPE_CHECKING:
    from engine.personas import Persona
    from training.scenarios import Scenario

# -- local GGUF judge ----------------------------------------------------------------------------


class LocalJudge:
    """A GGUF model in llama.cpp scores the rubric prompt.

    ``mode="expected"`` (default): the JSON answer is decoded under the score schema by hand: the
    keys and punctuation are forced, and at each value the model may only choose one of the
    schema's tokens ``1``-``5`` (exactly the choice a JSON-schema grammar leaves it). The score is
    the expectation of the model's probabilities over those five tokens (G-Eval style), and the
    most likely one is written into the JSON before the next key. One prefill plus a few tokens
    per reply; no grammar sampler, which in llama-cpp-python is slow on a large vocabulary
    (docs/judge.md, "Log"). ``mode="grammar"``: greedy generation under the JSON-schema grammar (slow on
    CPU; use with larger models that write good JSON).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 2048,
        runtime: Any = None,
        seed: int = 0,
        mode: str = "expected",
    ):
        if mode not in ("expected", "grammar"):
            raise InputError(f"Unknown local judge mode '{mode}'; use expected or grammar.")
        self.model_path = model_path
        self.n_ctx = n_ctx
        self.seed = seed
        self.mode = mode
        self._runtime = runtime
        self._lock = threading.Lock()
        self._digits: list[int] | None = None
        self.name = "local" if model_path is None else f"local:{Path(str(model_path)).name}"

    @property
    def runtime(self) -> Any:
        if self._runtime is None:
            self._runtime = LlamaRuntime(self.model_path or bundled_model_path(), n_ctx=self.n_ctx)
        return self._runtime

    def score(
        self, scenario: Scenario, persona: Persona, reply: str, others: list[dict] | None = None
    ) -> Scores:
        if empty_reply(reply):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        messages = judge_messages(scenario, persona, reply, others)
        with self._lock:
            if self.mode == "expected" and self._digit_tokens() is not None:
                return self._score_expected(messages)
            req = GenRequest(
                slot="__judge__",
                messages=messages,
                max_tokens=80,
                temperature=0.0,
                top_k=1,
                top_p=1.0,
                repeat_penalty=1.0,
                json_schema=SCORE_SCHEMA,
                seed=self.seed,
            )
            text = self.runtime.generate(req).text()
        values, _ = parse_scores(text)
        return Scores(values, self.name, text)

    def _digit_tokens(self) -> list[int] | None:
        if self._digits is None:
            llm = self.runtime.llm
            ids = [llm.tokenize(str(d).encode(), add_bos=False, special=False) for d in range(1, 6)]
            self._digits = [t[0] for t in ids] if all(len(t) == 1 for t in ids) else []
        return self._digits or None

    def _score_expected(self, messages: list[dict[str, str]]) -> Scores:
        import numpy as np

        rt = self.runtime
        llm = rt.llm
        digits = self._digit_tokens() or []
        values: dict[str, float] = {}
        text = "{"
        with rt.lock:
            rt._switch_to("__judge__")
            prompt = rt.format.render(messages) + '{"' + DIMENSIONS[0] + '": '
            tokens = rt.tokenize(prompt)
            if len(tokens) + 64 > rt.n_ctx:
                raise ModelError(
                    f"The judge prompt ({len(tokens)} tokens) does not fit the judge's context "
                    f"({rt.n_ctx})."
                )
            rt._prefill(tokens, None)  # all but the last token (reusing the cached prefix)
            llm.eval(tokens[-1:])
            for i, dim in enumerate(DIMENSIONS):
                logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
                z = logits[digits].astype(np.float64)
                p = np.exp(z - z.max())
                p /= p.sum()
                values[dim] = round(float((p * np.arange(1, 6)).sum()), 4)
                best = int(p.argmax()) + 1
                text += f'"{dim}": {best}'
                if i + 1 < len(DIMENSIONS):
                    nxt = f'{best}, "{DIMENSIONS[i + 1]}": '
                    text += ", "
                    llm.eval(llm.tokenize(nxt.encode(), add_bos=False, special=False))
        return Scores(values, self.name, text + "}")


# -- OpenAI-compatible judge -----------------------------------------------------------------------


class OpenAIJudge:
    """Any OpenAI-compatible chat-completions endpoint, e.g. ``http://127.0.0.1:8080/v1``.

    The API key comes from ``api_key`` or the environment (``MASCOT_JUDGE_API_KEY``, then
    ``OPENAI_API_KEY``); a local server usually needs none. The request asks for a JSON-schema
    response format; servers that reject it are asked again with plain JSON mode."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout: float = 60.0,
        temperature: float = 0.0,
    ):
        if not re.match(r"^https?://", base_url or ""):
            raise InputError(f"Judge endpoint '{base_url}' must start with http:// or https://.")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = (
            api_key or os.environ.get("MASCOT_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        )
        self.timeout = timeout
        self.temperature = temperature
        self.name = f"openai:{model}"
        self._schema_ok = True

    def _post(self, payload: dict[str, Any]) -> dict[str, Any]:
        url = self.base_url + "/chat/completions"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        req = urllib.request.Request(  # noqa: S310 (the user's URL)
            url,
            data=json.dumps(payload).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 (user's URL)
            return json.loads(resp.read().decode("utf-8"))

    def complete(self, messages: list[dict[str, str]]) -> str:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
            "max_tokens": 200,
        }
        attempts = []
        if self._schema_ok:
            attempts.append(
                {
                    "type": "json_schema",
                    "json_schema": {"name": "scores", "strict": True, "schema": SCORE_SCHEMA},
                }
            )
        attempts.append({"type": "json_object"})
        last = ""
        for fmt in attempts:
            try:
                data = self._post({**payload, "response_format": fmt})
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}"
                e.close()
                if e.code in (400, 422) and fmt["type"] == "json_schema":
                    self._schema_ok = False
                    continue
                if e.code in (401, 403):
                    raise ModelError(
                        f"Judge endpoint {self.base_url} refused the request ({last}); "
                        "check the API key (MASCOT_JUDGE_API_KEY)."
                    ) from None
                break
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                reason = getattr(e, "reason", e)
                raise ModelError(
                    f"Judge endpoint {self.base_url} is not reachable ({reason}); "
                    "check the URL and that the server is running."
                ) from None
            except json.JSONDecodeError:
                raise ModelError(
                    f"Judge endpoint {self.base_url} did not answer with JSON; is it an "
                    "OpenAI-compatible /v1 URL?"
                ) from None
            try:
                return str(data["choices"][0]["message"]["content"] or "")
            except (KeyError, IndexError, TypeError):
                raise ModelError(
                    f"Judge endpoint {self.base_url} answered without choices[0].message; "
                    "is it an OpenAI-compatible /v1 URL?"
                ) from None
        raise ModelError(
            f"Judge endpoint {self.base_url} failed ({last}); check the URL and model name "
            f"'{self.model}'."
        )

    def score(
        self, scenario: Scenario, persona: Persona, reply: str, others: list[dict] | None = None
    ) -> Scores:
        if empty_reply(reply):
            return Scores({d: 1.0 for d in DIMENSIONS}, self.name, "")
        text = self.complete(judge_messages(scenario, persona, reply, others))
        values, _ = parse_scores(text)
        return Scores(values, self.name, text)
