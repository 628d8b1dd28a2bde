"""Messages a question quotes, and the chunks that contain them.

Users paste what the compiler told them: `'unsupported tensor index: slice(0, 16, None)'`, `"FIXME:
only tensor SSA dependencies between partitions are supported"`. The code that prints a message is
almost always what answers the question, and it holds the message's words in the same order, while
the dense and BM25 scores see only a bag of common words ("only", "supported", "between"). So a
quoted span is matched as a word sequence: a chunk scores by the longest run of the span's
consecutive words it contains, as a share of the span (a message is formatted at run time, so
`'int32 overflow detected for operation add'` matches the source's `"int32 overflow detected for
operation "` on its first five words). Chunks holding a run join the retrieval pool, so the
answer is found whatever the other retrievers ranked.
"""
from __future__ import annotations

import re

import numpy as np

from ladder.indexer.text import keyword_tokens

# A quote opens and closes at a word boundary, so the apostrophes of "doesn't ... it's" are not one.
_QUOTE = re.compile(r"(?<![\w'])'([^'\n]+?)'(?![\w'])|\"([^\"\n]+?)\"|`([^`\n]+?)`|“([^”\n]+?)”|‘([^’\n]+?)’")
_WORD = re.compile(r"[a-z0-9_]+")
MIN_RUN = 3  # words of a span a chunk must hold in order (a shorter span: all of them)
CANDIDATES = 400  # chunks checked per span: those with the span's rarest word, at most this many


def spans(question: str) -> list[list[str]]:
    """The quoted spans of a question as lowercase word lists: two words or more, or one dotted or
    underscored identifier of 8 characters or more (`auto_profile_dir`)."""
    found = []
    for match in _QUOTE.finditer(question):
        text = next(group for group in match.groups() if group is not None)
        words = _WORD.findall(text.lower())
        if len(words) >= 2 or (len(words) == 1 and len(text.strip()) >= 8 and re.search(r"[_.]", text)):
            found.append(words)
    return found


def _longest_run(span: list[str], words: str) -> int:
    """How many consecutive words of `span` the word string `words` (" a b c ") holds, at most."""
    for length in range(len(span), 0, -1):
        for start in range(len(span) - length + 1):
            if f" {' '.join(span[start:start + length])} " in words:
                return length
    return 0


class QuoteMatcher:
    """Word strings of the index's chunks, built on first use and kept for the process."""

    def __init__(self, records: list[dict], vocabulary) -> None:
        self.records, self.vocabulary = records, vocabulary
        self._words: dict[int, str] = {}

    def words(self, row: int) -> str:
        if row not in self._words:
            self._words[row] = f" {' '.join(_WORD.findall(self.records[row]['text'].lower()))} "
        return self._words[row]

    def candidates(self, span: list[str]) -> np.ndarray:
        """The chunks holding the span's rarest keyword (the sequence can only be where that word is)."""
        tokens = [t for t in keyword_tokens(" ".join(span)) if t in self.vocabulary.ids]
        if not tokens:
            return np.zeros(0, dtype=np.int64)
        rarest = max(tokens, key=self.vocabulary.weight)
        return self.vocabulary.rows_with(rarest)[:CANDIDATES]

    def shares(self, question_spans: list[list[str]]) -> dict[int, float]:
        """Row -> the largest share of a span it holds as one run of words (runs under MIN_RUN words
        count nothing); rows holding no run are left out.

        The best span, not the mean over spans: a question pastes the message beside its own code
        (`p = a_ptr + idx`), which no compiler file holds, and the file that prints the message is
        the answer whatever else was quoted."""
        found: dict[int, float] = {}
        for span in question_spans:
            needed = min(MIN_RUN, len(span))
            for row in self.candidates(span).tolist():
                run = _longest_run(span, self.words(row))
                if run >= needed:
                    found[row] = max(found.get(row, 0.0), run / len(span))
        return found
