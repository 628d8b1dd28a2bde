"""An optional summary of rung 4's evidence by a language model behind an OpenAI-compatible API.

Configured by environment: `LADDER_LLM_BASE_URL` (e.g. http://localhost:8000/v1),
`LADDER_LLM_MODEL`, and `LADDER_LLM_API_KEY` (or `OPENAI_API_KEY`). Unset: no summary, and rung 4
still returns its cited chunks. An endpoint that does not answer costs one warning line, never
the diagnosis: after the first failure the summariser is switched off for the rest of the run.
"""
from __future__ import annotations

import os

TIMEOUT_S = 30.0
PROMPT = """You explain Triton compiler behaviour to a kernel engineer.
The kernel's situation: {describe}
Compiler source that was retrieved for it:
{chunks}
In at most two sentences, say what this code implies for the kernel's case and what to change in
the kernel. Cite the code as path:start-end exactly as given. Do not invent other files."""


class Summariser:
    def __init__(self) -> None:
        self.base_url = os.environ.get("LADDER_LLM_BASE_URL")
        self.model = os.environ.get("LADDER_LLM_MODEL")
        self.api_key = os.environ.get("LADDER_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "none"
        self.warning: str | None = None
        self._client = None

    @property
    def enabled(self) -> bool:
        return bool(self.base_url and self.model) and self.warning is None

    def summarise(self, describe: str, chunks: list[dict]) -> str | None:
        if not self.enabled:
            return None
        listing = "\n\n".join(f"{c['path']}:{c['start']}-{c['end']} ({c.get('pass') or c.get('symbol') or ''})\n"
                              f"{c.get('text', '')[:1500]}" for c in chunks[:3])
        try:
            if self._client is None:
                from openai import OpenAI

                self._client = OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=TIMEOUT_S, max_retries=0)
            reply = self._client.chat.completions.create(
                model=self.model, temperature=0,
                messages=[{"role": "user", "content": PROMPT.format(describe=describe, chunks=listing)}])
            text = (reply.choices[0].message.content or "").strip()
            return " ".join(text.split()) or None
        except Exception as error:  # any endpoint failure: one warning, no summaries from now on
            first = (str(error).strip().splitlines() or [""])[0]
            self.warning = f"LLM endpoint {self.base_url} unusable ({type(error).__name__}: {first}); rung 4 shows the cited chunks only"
            return None
