"""What each retriever reads of a chunk and of a query.

Compiler code names things in compounds (`ConvertLayoutOpConversion`, `getVectorSize`,
`ttg.convert_layout`, `ld.global.v4.b32`) while a kernel engineer asks in words ("layout
conversion", "vector size") or pastes an op from an IR dump. Both retrievers are given both forms:

- BM25 (`keyword_tokens`): every identifier counts as itself and as its words, each time it
  occurs (`ConvertLayoutOp` -> convertlayoutop, convert, layout, op), lower-cased and stemmed,
  English stopwords left out; dotted op names and PTX mnemonics fall apart at the dots. A chunk's
  keyword text repeats its path, enclosing symbol, pass and related files (`keyword_text`), so a
  match on what the code *is* weighs more than a word in passing.
- the dense model (`dense_text`): reads only the first MAX_TOKENS word pieces of a chunk, so they
  go to what tells most in English: the file and folder names and the enclosing symbol spelt out
  as words, the pass the code implements with its one-line summary, then the comments of the
  chunk, then the code. Queries get the words of their compound identifiers appended
  (`dense_query`), so that a pasted `ttg.convert_layout` meets "convert layout".

Text in Chinese (the Ascend API reference, some pass comments) is read by both with the English of
its terms added (indexer.gloss), and BM25 also indexes the Chinese as character pairs; a question in
Chinese is glossed the same way.
"""
from __future__ import annotations

import re
from functools import lru_cache

from ladder.indexer.gloss import cjk_tokens, english, has_cjk

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Bump when what BM25 reads of a chunk changes (tokens, weights, glosses): every build then
# re-indexes the keywords once, without re-embedding.
KEYWORD_VERSION = 1
# Words inside an identifier: HTTPServer -> HTTP Server, convert_layout -> convert layout, v4 -> v 4.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# How many times the header (path, symbol, pass, related files) is repeated in the keyword text.
HEADER_WEIGHT = 3

_CPP_LINE_COMMENT = re.compile(r"//+[!<]?\s?(.*)")
_BLOCK_COMMENT = re.compile(r"/\*+(.*?)\*+/", re.S)
_PY_LINE_COMMENT = re.compile(r"#+\s?(.*)")
_DOCSTRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)
_PROSE = {"markdown", "yaml"}


def words(name: str) -> str:
    """The lower-case words of identifiers: `AtomicRMWOpConversion::matchAndRewrite` -> atomic rmw op conversion match and rewrite."""
    return " ".join(part.lower() for identifier in _IDENTIFIER.findall(name) for part in _PART.findall(identifier))


# The words a question is phrased with, beyond bm25s's short English list: they say nothing about
# which code answers ("why does my kernel ...", "which pass does that?").
QUESTION_WORDS = frozenset("""
    about after again all also am any anything because been before being both can cannot could did do
    does doing done each even every from get gets got had has have having here how i instead its just
    me may might more most must my once only other our own same see seen should since so some something
    still than them those through too under until very we were what when where whether which while who
    whom why would you your
""".split())


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN) | QUESTION_WORDS


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def keyword_tokens(text: str) -> list[str]:
    """BM25 tokens: each identifier whole and split into its words, stemmed, without stopwords.

    `ttg.convert_layout` -> ttg, convert_layout, convert, layout; `ld.global.v4.b32` -> ld, global,
    v4, b32; `getVectorSize` -> getvectors, get, vector, size (stemmed). Single characters and bare
    numbers carry nothing and are dropped.
    """
    tokens: list[str] = []
    for identifier in _IDENTIFIER.findall(text):
        tokens.extend(_identifier_tokens(identifier))
    return tokens + cjk_tokens(text)


# Words a question uses for what compiler code names otherwise ("how is X lowered", "does it fold
# the adds", "why is the load not hoisted", "which pass moves it"): the code's words are added to
# the question's.
CODE_WORDS = {
    "lower": "convert conversion", "become": "convert conversion rewrite", "turn": "convert rewrite",
    "fold": "combine canonicalize", "merge": "combine", "hoist": "invariant licm", "unpack": "convert",
    "upcast": "convert ext", "recognise": "match pattern", "recognize": "match pattern", "insert": "create",
    "decide": "choose select",
    # A pass that moves an op ("which pass moves it before the loop") hoists, sinks or bubbles it up.
    "move": "hoist sink bubble reorder",
    # Values noticed to be the same ("two iter_args that are always equal") are CSE's business.
    "equal": "cse", "duplicate": "cse", "redundant": "cse",
}


@lru_cache(maxsize=1)
def _code_words() -> dict[str, tuple[str, ...]]:
    return {_identifier_tokens(word)[0]: tuple(keyword_tokens(code)) for word, code in CODE_WORDS.items()}


def keyword_query(query: str) -> list[str]:
    """The BM25 tokens of a question: its own, the code's words for some of them (CODE_WORDS), and
    for a Chinese question the English of its terms."""
    tokens = keyword_tokens(f"{query}\n{english(query)}" if has_cjk(query) else query)
    code_words = _code_words()
    return tokens + [word for token in tokens for word in code_words.get(token, ())]


@lru_cache(maxsize=200_000)
def _identifier_tokens(identifier: str) -> tuple[str, ...]:
    """The tokens of one identifier; cached, since code repeats its identifiers (twice as fast on a Triton tree)."""
    stopwords, stemmer = _stopwords(), _stemmer()
    whole = identifier.lower()
    parts = _PART.findall(identifier)
    candidates = [whole] + [p.lower() for p in parts] if len(parts) > 1 else [whole]
    return tuple(stemmer.stemWord(t) for t in candidates if len(t) > 1 and not t.isdigit() and t not in stopwords)


def keyword_text(metadata: dict, text: str) -> str:
    """What BM25 indexes for a chunk: its header (path, symbol, pass, related files) weighted, then its text."""
    header = "\n".join(str(metadata[k]) for k in ("path", "symbol", "pass", "related") if metadata.get(k))
    gloss = f"\n{english(text)}" if has_cjk(text) else ""
    return (header + "\n") * HEADER_WEIGHT + text + gloss


def comments(text: str, language: str) -> str:
    """The comments and docstrings of a piece of code, as one line of prose."""
    if language in ("cpp", "c", "tablegen"):
        found = [m.group(1) for m in _CPP_LINE_COMMENT.finditer(text)] + [m.group(1) for m in _BLOCK_COMMENT.finditer(text)]
    elif language == "python":
        found = [m.group(1) or m.group(2) for m in _DOCSTRING.finditer(text)]
        found += [m.group(1) for m in _PY_LINE_COMMENT.finditer(text)]
    else:
        return ""
    return " ".join(" ".join(piece.split()) for piece in found if piece and piece.strip())


def dense_text(metadata: dict, text: str) -> str:
    """What the dense model embeds for a chunk: a header in words, the comments, then the code.

        load store op to llvm (triton nvidiagpu to llvm); atomic rmw op conversion match and
        rewrite; pass convert-triton-gpu-to-llvm: Convert TritonGPU to LLVM
        <the chunk's comments>
        <the chunk's code>

    Markdown and catalog entries are prose already: the header, then the text as written.
    """
    language = metadata.get("language", "")
    parts = metadata.get("path", "").split("/")
    place = words(parts[-1].rsplit(".", 1)[0])
    if len(parts) > 1:
        place += f" ({words(parts[-2])})"
    header = [place]
    symbol = metadata.get("symbol", "")
    if symbol:
        header.append(symbol if language == "markdown" else words(symbol))
    if metadata.get("pass"):
        first = metadata["pass"].split(", ")[0]
        summary = metadata.get("summary", "")
        header.append(f"pass {first}: {summary}" if summary else f"pass {first}")
    head = "; ".join(header)
    if has_cjk(text):
        # The model reads English only, and only the first tokens: the gloss goes right after the header.
        head += f"\n{english(symbol + chr(10) + text)}"
    if language in _PROSE:
        return f"{head}\n{text}"
    prose = comments(text, language)
    return f"{head}\n{prose}\n{text}" if prose else f"{head}\n{text}"


def dense_query(query: str) -> str:
    """The query as the dense model reads it: with the words of its compound identifiers appended."""
    compounds = [token for token in re.findall(r"[A-Za-z_][\w.]*", query)
                 if "." in token.strip(".") or "_" in token or len(_PART.findall(token)) > 1]
    spelled = [words(token) for token in dict.fromkeys(compounds)]
    if has_cjk(query):
        spelled.append(english(query))
    return f"{query} ({'; '.join(spelled)})" if spelled else query
