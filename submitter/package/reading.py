"""How the leak scan reads a text file: large blocks at disk speed, and only the lines a rule could report.

Going through a file line by line costs more in Python than the rules themselves, so a file is read in
blocks of whole lines, and the needles of every rule (patterns.py) are looked for in each block at
once. Only the lines holding one are decoded and handed to the rules, to just the rules whose needles
were looked for there, numbered from the block's count of newlines. A line longer than a block comes in
`Piece`s instead, each handed whole to the rules whose needles it holds.

Python's regular expressions find a literal byte quickly (a tight loop skips to it) and a choice of
several starting bytes slowly (each byte goes through a small interpreter), so the needles are grouped
under a few rare bytes they hold: one search per such byte, each needle checked whole from there.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import BinaryIO

from submitter.package.patterns import Needle

# Characters outside ASCII that Python's lower() or its case-insensitive matching take for an ASCII
# letter: U+0130 and U+212A (Kelvin) lower to i and k; U+0131 and U+017F match i and s. A line holding
# one is searched once more with each written as that letter: the rules would read it so.
ASCII_LOOKALIKES = "\u0130\u0131\u017f\u212a"
_AS_ASCII = tuple(
    (c.encode(), letter) for c, letter in zip(ASCII_LOOKALIKES, (b"i", b"i", b"s", b"k"), strict=True)
)
_LOOKALIKE = re.compile(b"|".join(re.escape(c.encode()) for c in ASCII_LOOKALIKES))

# What a search for a byte costs, in searches for a rare one: each occurrence of a common byte is a try.
# By how often bytes occur in logs, JSON and code (counted on published trees); only speed depends on it.
_COST = {
    **dict.fromkeys(b"0l_inroaste \n", 5.0),
    **dict.fromkeys(b'21hg."f,umpdc', 2.5),
    **dict.fromkeys(b"TRP79xIw-LSCE586yk43vb()=:", 1.5),
}


@dataclass(frozen=True)
class Lines:
    """Whole lines, each no longer than a piece (the last one may lack its newline at the end of a file)."""

    data: bytes


@dataclass(frozen=True)
class Piece:
    """Part of a line longer than a piece; `ends_line` is False while the line goes on in the next one."""

    data: bytes
    ends_line: bool


@dataclass(frozen=True)
class Candidate:
    """A line where a needle occurs: its index in the block, its bytes, and the rules to hand it to
    (None: every rule, where needles cannot be trusted)."""

    index: int
    data: bytes
    rules: frozenset[str] | None


@dataclass(frozen=True)
class _Search:
    raw: bool  # over the bytes as they are; False: over their lower-cased copy
    regex: re.Pattern[bytes]
    rules: frozenset[str]  # the rules whose needles it finds


class Trigger:
    """The needles of every rule, searched in blocks; None for needles: every line goes to every rule."""

    def __init__(self, needles: Mapping[str, Iterable[Needle]] | None) -> None:
        self.everything = needles is None
        by_rule = {rule: [(rule, needle) for needle in found] for rule, found in (needles or {}).items()}
        # Over blocks, one search stands for several rules; a long line is worth the searches of each rule.
        self._searches = _searches([pair for pairs in by_rule.values() for pair in pairs])
        self._by_rule = [(rule, _searches(pairs)) for rule, pairs in by_rule.items()]

    def lines(self, block: bytes) -> Iterator[Candidate]:
        """The lines of a block of whole lines where a needle occurs, in order."""
        if self.everything:
            yield from (Candidate(index, line, None) for index, line in enumerate(_split_lines(block)))
            return
        lowered = block.lower()  # bytes: ASCII letters only, which is all a lower-cased needle holds
        hits: dict[int, frozenset[str]] = {}  # where a line starts -> the rules of the searches that hit it
        for search in self._searches:
            text, position = (block if search.raw else lowered), 0
            while match := search.regex.search(text, position):
                start = text.rfind(b"\n", 0, match.start()) + 1
                hits[start] = hits.get(start, frozenset()) | search.rules
                position = text.find(b"\n", match.start()) + 1 or len(text)
        position = 0
        while not block.isascii() and (match := _LOOKALIKE.search(block, position)):
            start = block.rfind(b"\n", 0, match.start()) + 1
            position = block.find(b"\n", match.start()) + 1 or len(block)
            hits[start] = hits.get(start, frozenset()) | self._rules_in(block[start:position])
        index, counted = 0, 0
        for start in sorted(hits):
            index += block.count(b"\n", counted, start)
            counted = start
            yield Candidate(index, block[start : block.find(b"\n", start) + 1 or len(block)], hits[start])

    def rules(self, data: bytes) -> frozenset[str] | None:
        """The rules to hand `data` (a piece of a long line) to; None: every rule."""
        return None if self.everything else self._rules_in(data)

    def _rules_in(self, data: bytes) -> frozenset[str]:
        lowered = _as_ascii(data).lower()
        return frozenset(
            rule
            for rule, searches in self._by_rule
            if any(search.regex.search(data if search.raw else lowered) for search in searches)
        )


def _as_ascii(data: bytes) -> bytes:
    """`data` with each look-alike written as its ASCII letter (shorter: for finding needles only)."""
    if not data.isascii():
        for lookalike, letter in _AS_ASCII:
            data = data.replace(lookalike, letter)
    return data


def _split_lines(block: bytes) -> list[bytes]:
    lines = [line + b"\n" for line in block.split(b"\n")]
    lines[-1] = lines[-1][:-1]  # what follows the last newline: nothing, or a last line without one
    return lines if lines[-1] else lines[:-1]


def _searches(needles: list[tuple[str, Needle]]) -> list[_Search]:
    """Few searches, each for a byte that many needles hold: `k(?:en(?<=token)[…]|ia(?<=akia))` finds
    token… and akia. From the byte on, a needle is matched forward first (a wrong byte ends the try at
    once), then what came before the byte is checked looking back, then the needle's tail."""
    groups: dict[tuple[bool, int], list[tuple[str, Needle, int]]] = defaultdict(list)
    left = list(needles)
    for _, needle in left:
        if not needle.literal:
            raise ValueError(f"a needle starts with a literal: {needle}")
    while left:
        # The byte that stands for the most needles for what its search costs (greedy set cover).
        raw, byte = max(
            {(needle.raw, byte) for _, needle in left for byte in needle.literal},
            key=lambda key: (
                sum(needle.raw == key[0] and key[1] in needle.literal for _, needle in left)
                / _COST.get(key[1], 1)
            ),
        )
        taken = [(rule, needle) for rule, needle in left if needle.raw == raw and byte in needle.literal]
        groups[raw, byte] += [(rule, needle, needle.literal.index(byte)) for rule, needle in taken]
        left = [item for item in left if item not in taken]
    return [
        _Search(
            raw,
            re.compile(re.escape(bytes([byte])) + _group(sorted({_rest(n, at) for _, n, at in found}))),
            frozenset(rule for rule, _, _ in found),
        )
        for (raw, byte), found in sorted(groups.items())
    ]


def _rest(needle: Needle, at: int) -> bytes:
    behind = b"(?<=" + re.escape(needle.literal) + b")" if at else b""
    return re.escape(needle.literal[at + 1 :]) + behind + needle.tail


def _group(alternatives: list[bytes]) -> bytes:
    if b"" in alternatives:
        return b""  # the byte alone is a needle: the others add nothing
    return alternatives[0] if len(alternatives) == 1 else b"(?:" + b"|".join(alternatives) + b")"


def chunks(stream: BinaryIO, first: bytes, size: int) -> Iterator[bytes]:
    """`first` (what was read already) and the rest of the stream, in chunks of at most `size` bytes."""
    for start in range(0, len(first), size):
        yield first[start : start + size]
    while data := stream.read(size):
        yield data


def segments(chunks: Iterable[bytes], size: int) -> Iterator[Lines | Piece]:
    """The chunks (each at most `size` bytes) as runs of whole lines and pieces of longer lines.

    A line of more than `size` bytes (its newline counted) comes in pieces of `size` bytes from its start,
    the last one shorter, exactly as `readline(size)` returns it."""
    pending, in_long_line = b"", False  # the start of the current line (of a long one: what is left)
    for data in chunks:
        buffer = pending + data if pending else data
        first_end = buffer.find(b"\n", len(pending)) + 1  # pending holds no newline
        if not first_end:
            while len(buffer) > size:
                yield Piece(buffer[:size], ends_line=False)
                buffer, in_long_line = buffer[size:], True
            pending = buffer
            continue
        start = 0
        if in_long_line or first_end > size:
            yield from _pieces(buffer[:first_end], size)
            start, in_long_line = first_end, False
        # Every line after the first lies inside `data`, so none is longer than `size`.
        cut = buffer.rfind(b"\n") + 1
        if cut > start:
            yield Lines(buffer[start:cut])
        pending = buffer[cut:]
    if pending:
        yield Piece(pending, ends_line=True) if in_long_line else Lines(pending)


def _pieces(line: bytes, size: int) -> Iterator[Piece]:
    while len(line) > size:
        yield Piece(line[:size], ends_line=False)
        line = line[size:]
    yield Piece(line, ends_line=True)
