"""One-line reasons for failures of candidate code (users read them in a table cell)."""
from __future__ import annotations

import re

from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)

MAX_REASON = 300


# The rejection stage of a candidate whose call ran out of device memory: not a verdict on it (the
# memory is shared with the judge and the other contestants), so the optimization gate leaves it unjudged.
OUT_OF_MEMORY = "device-memory"
DEVICE_MEMORY = re.compile(r"OutOfMemoryError|\bout of memory\b", re.IGNORECASE)


def out_of_device_memory(message: str | None) -> bool:
    """Whether a failure is an allocation the device could not serve (torch's ``OutOfMemoryError``)."""
    return bool(message) and DEVICE_MEMORY.search(message) is not None


def one_line(error: BaseException) -> str:
    """``Type: the line that says what went wrong``, shortened to fit a report line."""
    kind = type(error).__name__
    text = _message(error)
    full = str(error)
    # Device errors whose key phrase is buried below the first line get it in front.
    for phrase in ("illegal memory access", "misaligned address", "out of memory", "device-side assert"):
        if re.search(phrase, full, re.IGNORECASE) and not re.search(phrase, text, re.IGNORECASE):
            text = f"{phrase}: {text}"
            break
    line = f"{kind}: {text}" if text else kind
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 3] + "..."


def _message(error: BaseException) -> str:
    # Triton's CompilationError puts a source excerpt first and the actual error last.
    explicit = getattr(error, "error_message", None)
    if explicit:
        return _first_line(str(explicit))
    if type(error).__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
        cause = error.__cause__
        if cause is not None:
            return one_line(cause)
        lines = [line for line in str(error).splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""
    if type(error).__name__ == "InterpreterError" and error.__cause__ is not None:
        return one_line(error.__cause__)
    return _first_line(str(error))


def _first_line(text: str) -> str:
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def last_error_line(lines: list[str]) -> str | None:
    """The last line of a process's output that looks like an error, shortened (a crash's reason)."""
    for line in reversed(lines):
        text = line.strip()
        if text and ("Error" in text or "error" in text or "Fatal" in text or "Aborted" in text):
            return text[:MAX_REASON]
    return None
