"""Demo models for the pickled-dataset LLM benchmarks: a tokenizer that writes any answer text back
exactly, and the synthetic engine's answers, so that evaluation scores real text end to end.

The tokenizer is word-level over the answers' own pieces (a run of letters or digits, one other
character, or a run of white space), each one token, decoded by joining them: code keeps its newlines
and indentation. Ids 0-2 are Llama 2's and Mixtral's special tokens (<unk>, <s>, </s>), so EOS is 2 as
in the real vocabulary and `skip_special_tokens` drops them as Hugging Face does.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path

from harness.stand_in_models import DEMO_ANSWERS, prompt_key
from submitter.fileio import write_text_atomic

SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")
# Words of synthetic questions, reference answers and the demo's answers.
_ANSWER_TEXT = (
    "the answer question step reason because first then therefore result example task sentence given "
    "language text context option correct choice information data explain summary translate meaning "
    "water energy system people history science number value process model word statement true false"
)
ANSWER_WORDS = _ANSWER_TEXT.split()
PIECE_PATTERN = r"\s+|\w+|[^\w\s]"
_PIECES = re.compile(PIECE_PATTERN)


def pieces(text: str) -> list[str]:
    """The demo tokenizer's tokens of `text`: joined, they are `text` again."""
    return _PIECES.findall(text)


def text_of_length(draw: random.Random, words: Sequence[str], tokens: int) -> str:
    """Sentences of `words` that the demo tokenizer splits into exactly `tokens` pieces (at least 1)."""
    out: list[str] = []
    while len(out) < tokens:
        sentence = [draw.choice(words) for _ in range(draw.randrange(8, 21))]
        if out:
            out.append(" ")
        out.append(sentence[0].capitalize())
        for word in sentence[1:]:
            out += [" ", word]
        out.append(".")
    out = out[:tokens]
    if out[-1] == " ":
        out[-1] = "."
    return "".join(out)


def mutate_words(text: str, words: Sequence[str], draw: random.Random, rate: float = 0.1) -> str:
    """`text` with about `rate` of its words replaced: an imperfect answer that still scores well."""
    return "".join(
        draw.choice(words) if piece.isalpha() and draw.random() < rate else piece for piece in pieces(text)
    )


def write_text_demo_model(
    directory: Path,
    answers: Sequence[str],
    max_tokens: int,
    prompts: Sequence[Sequence[int]] | None = None,
    keys: Sequence[str] | None = None,
) -> Path:
    """tokenizer.json over the answers' pieces and answers.json (each answer's ids, capped at max_tokens):
    by dataset index, or by prompt where `prompts` are given (each answer's prompt ids) or their `keys`
    (`prompt_key` of samples with audio or images)."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, pre_tokenizers

    answer_pieces = [pieces(answer) for answer in answers]
    found = sorted({piece for each in answer_pieces for piece in each})
    vocabulary = {token: number for number, token in enumerate([*SPECIAL_TOKENS, *found])}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token=SPECIAL_TOKENS[0]))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex(PIECE_PATTERN), behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    tokenizer.add_special_tokens([AddedToken(token, special=True) for token in SPECIAL_TOKENS])
    directory.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(directory / "tokenizer.json"))
    write_text_atomic(
        directory / "tokenizer_config.json", json.dumps({"clean_up_tokenization_spaces": False})
    )
    ids = [[vocabulary[piece] for piece in each][:max_tokens] for each in answer_pieces]
    stored: object = ids
    if prompts is not None:
        keys = [prompt_key(prompt) for prompt in prompts]
    if keys is not None:
        stored = {"by_prompt": dict(zip(keys, ids, strict=True))}
    write_text_atomic(directory / DEMO_ANSWERS, json.dumps(stored, separators=(",", ":")))
    return directory
