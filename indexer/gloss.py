"""English for text written in Chinese, so that either language finds the other.

The bundled embedding model reads English only, and BM25 needs shared words. Part of the Ascend
documentation exists only in Chinese (the API reference, docs/zh/triton_api), and some passes are
commented in Chinese. Without a multilingual model that installs offline, the index translates
terms instead: `indexer/glossary/zh.yaml` maps the Chinese terms of these docs and comments to
English. A Chinese chunk is segmented by forward maximum matching against the glossary (longest
term first, so 内核 "kernel" is not read as 核 "core"), and the English of every term found is added
to what both retrievers read of it (indexer.text); a Chinese question is glossed the same way.

`cjk_tokens` gives BM25 the Chinese itself as overlapping character pairs, the usual way to match
Chinese without a word segmenter.
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
# English terms added per chunk, at most: the first ones found are the ones its title and opening use.
MAX_TERMS = 60


@lru_cache(maxsize=1)
def _glossary() -> tuple[dict[str, str], int]:
    import yaml

    text = resources.files("ladder.indexer").joinpath("glossary/zh.yaml").read_text(encoding="utf-8")
    terms = {key: str(value or "") for key, value in yaml.safe_load(text).items()}
    return terms, max(len(key) for key in terms)


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def english(text: str) -> str:
    """The English of the glossary terms in `text`, in order of first appearance, each once."""
    terms, longest = _glossary()
    found: dict[str, None] = {}
    for run in _CJK_RUN.findall(text):
        position = 0
        while position < len(run):
            for size in range(min(longest, len(run) - position), 0, -1):
                meaning = terms.get(run[position:position + size])
                if meaning is not None:
                    if meaning:
                        found.setdefault(meaning)
                    position += size
                    break
            else:
                position += 1
        if len(found) >= MAX_TERMS:
            break
    return " ".join(list(found)[:MAX_TERMS])


def cjk_tokens(text: str) -> list[str]:
    """Overlapping character pairs of every Chinese run (a lone character as itself)."""
    tokens: list[str] = []
    for run in _CJK_RUN.findall(text):
        tokens.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
    return tokens
