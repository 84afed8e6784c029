"""The reference's post-processing: strip, then one sentence per line (NLTK Punkt, English).

rougeLsum scores sentence by sentence, split at newlines, so the split must be NLTK's exactly: nltk is
pinned, and its English Punkt data ships inside this package, so nothing is downloaded at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

NLTK_DATA = Path(__file__).resolve().parent / "nltk_data"


@cache
def _sentence_splitter() -> Callable[[str], list[str]]:
    import nltk
    from nltk.tokenize import sent_tokenize

    nltk.data.path.insert(0, str(NLTK_DATA))
    return sent_tokenize


def one_sentence_per_line(text: str) -> str:
    return "\n".join(_sentence_splitter()(text.strip()))
