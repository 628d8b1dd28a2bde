"""Merge a capture's records into one per distinct compiled kernel, labelled by what differs.

A forward run case by case launches the same compiled kernel again and again, and one function
may be compiled for several specializations; labels such as `add[n:i32]` vs `add[n:i32%16]` keep
the facts about each apart.
"""
from __future__ import annotations

from ladder.runner.capture.record import CapturedKernel
from ladder.runner.own_builtins import BUILTINS as __builtins__  # noqa: F401  (see that module)


def merge_and_label(records: list[CapturedKernel]) -> list[CapturedKernel]:
    """One record per distinct compiled kernel (same hash across cases merges launches), labelled.

    Several specializations of one function get labels that say what differs, e.g.
    `add[n:i32]` vs `add[n:i32%16]`, so that facts about them stay apart.
    """
    merged: dict[tuple, CapturedKernel] = {}
    for record in records:
        key = (record.function, record.metadata.get("hash"), str(record.config))
        if key in merged:
            merged[key].launches.extend(record.launches)
        else:
            merged[key] = record
    kernels = list(merged.values())
    by_function: dict[str, list[CapturedKernel]] = {}
    for kernel in kernels:
        by_function.setdefault(kernel.function, []).append(kernel)
    for variants in by_function.values():
        if len(variants) == 1:
            variants[0].label = variants[0].name
            continue
        descriptions = [_specialization_terms(kernel) for kernel in variants]
        shared = set.intersection(*(set(terms) for terms in descriptions))
        for kernel, terms in zip(variants, descriptions):
            differing = [term for term in terms if term not in shared]
            kernel.label = f"{kernel.name}[{','.join(differing)}]" if differing else kernel.name
        _number_duplicates(variants)
    return kernels


def _specialization_terms(kernel: CapturedKernel) -> list[str]:
    terms = []
    for name, kind in kernel.signature.items():
        if kind == "constexpr":
            terms.append(f"{name}={kernel.constexprs.get(name)}")
        else:
            divisible = any(attr == ["tt.divisibility", 16] for attr in kernel.attrs.get(name, []))
            terms.append(f"{name}:{kind}{'%16' if divisible else ''}")
    for option in ("num_warps", "num_stages"):
        terms.append(f"{option}={kernel.metadata.get(option)}")
    return terms


def _number_duplicates(variants: list[CapturedKernel]) -> None:
    seen: dict[str, int] = {}
    for kernel in variants:
        count = seen.get(kernel.label, 0)
        seen[kernel.label] = count + 1
        if count:
            kernel.label = f"{kernel.label}#{count + 1}"
