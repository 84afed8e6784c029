"""qwen3-vl-235b-a22b's dataset: Shopify/product-catalogue as its Hugging Face snapshot lays it out, a
folder of Parquet shards (`data/train-*.parquet`, `data/test-*.parquet`) whose train and test splits,
concatenated in that order, are the 48,289 samples (the reference's `split="train+test"`).

Each row has `product_image` (the Hugging Face image struct: file bytes and a path), `product_title`,
`product_description`, `potential_product_categories` and the ground truths `ground_truth_category`,
`ground_truth_brand`, `ground_truth_is_secondhand`. A sample becomes the chat the reference sends
(task.py formulate_loaded_sample): a system message with the answer's JSON schema, then the user's text
and the image, which the reference re-saves in its own format with Pillow and inlines as a base64 data
URL (done the same way here, so the bytes sent are the reference's). Guided decoding is off, as in the
reference's specification. `tok_ref_output_len` exists in synthetic shards only.
"""

from __future__ import annotations

import base64
import json
import re
from array import array
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

from harness.media import ImageChat
from harness.prompts import Prompts, answer_lengths
from submitter.errors import UsageProblem
from submitter.evaluation.product_metadata import GroundTruth
from submitter.fileformats.dataframe_parquet import read_parquet_dataframe, write_parquet_dataframe

DATASET_SUFFIX = ""  # a folder of Parquet shards
RESPONSE_DTYPE = "byte"  # what answer_payload logs
SAMPLE_MEDIA = "image"
WHAT = "qwen3-vl-235b-a22b dataset"
SPLITS = ("train", "test")  # the reference's default --dataset.split, concatenated in this order
IMAGE_COLUMN = "product_image"
TRUTH_COLUMNS = ("ground_truth_category", "ground_truth_brand", "ground_truth_is_secondhand")
PROMPT_COLUMNS = ("product_title", "product_description", "potential_product_categories")
OUTPUT_LENGTH_COLUMN = "tok_ref_output_len"
COLUMNS = (IMAGE_COLUMN, *PROMPT_COLUMNS, *TRUTH_COLUMNS)
_PROMPT_FILE = Path(__file__).resolve().parent / "prompt.json"
_PLACEHOLDER = re.compile(r"\{(title|description|categories)\}")


@cache
def _prompt_texts() -> tuple[str, str]:
    texts = json.loads(_PROMPT_FILE.read_text(encoding="utf-8"))
    return texts["system"], texts["user"]


def shards(folder: Path) -> list[Path]:
    """The Parquet shards of each split, splits in the reference's order, shards by name."""
    if not folder.is_dir():
        raise UsageProblem(
            f"{WHAT} {folder} must be the folder of the dataset's snapshot (data/train-*.parquet, "
            "data/test-*.parquet), as Hugging Face lays out Shopify/product-catalogue"
        )
    found = [path for split in SPLITS for path in sorted(folder.glob(f"**/{split}-*.parquet"))]
    if not found:
        raise UsageProblem(
            f"{WHAT} {folder} has no train-*.parquet or test-*.parquet shards; download "
            "Shopify/product-catalogue or make a stand-in with `submitter data synth`"
        )
    return found


def _rows(folder: Path, columns: tuple[str, ...], limit: int | None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for shard in shards(folder):
        if limit is not None and len(rows) >= limit:
            break
        frame = read_parquet_dataframe(shard, columns, WHAT)
        rows += frame.to_dict("records")
    return rows[:limit] if limit is not None else rows


def image_as_sent(raw: object, where: str) -> tuple[bytes, str]:
    """The image re-saved by Pillow in its own format, as the reference does before inlining it."""
    from PIL import Image, UnidentifiedImageError

    data = raw.get("bytes") if isinstance(raw, dict) else None
    if not isinstance(data, bytes | bytearray) or not data:
        raise UsageProblem(f"{where}: {IMAGE_COLUMN} must hold the image's bytes (a Hugging Face image)")
    try:
        image = Image.open(BytesIO(data))
        image.load()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise UsageProblem(f"{where}: {IMAGE_COLUMN} is not an image Pillow can read ({exc})") from None
    saved = BytesIO()
    image.save(saved, format=image.format)
    return saved.getvalue(), str(image.format)


def categories_text(categories: object) -> str:
    """The candidates as the reference's f-string prints them: str() of a list of strings."""
    if hasattr(categories, "tolist"):
        categories = categories.tolist()  # a numpy array from Parquet
    return str([str(category) for category in categories])  # type: ignore[attr-defined]


def chat_of(row: dict[str, Any], where: str) -> ImageChat:
    system, user = _prompt_texts()
    values = {
        "title": str(row["product_title"]),
        "description": str(row["product_description"]),
        "categories": categories_text(row["potential_product_categories"]),
    }
    image, image_format = image_as_sent(row[IMAGE_COLUMN], where)
    url = f"data:image/{image_format};base64,{base64.b64encode(image).decode('ascii')}"
    text = _PLACEHOLDER.sub(lambda found: values[found.group(1)], user)
    messages = (
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": [{"type": "text", "text": text}, {"type": "image_url", "image_url": {"url": url}}],
        },
    )
    return ImageChat(messages, (image,))


def answer_payload(text: str) -> array:
    """The reference's response: the answer's UTF-8 bytes."""
    return array("B", text.encode("utf-8"))


def load_samples(path: Path, *, limit: int | None = None, max_input_tokens: int | None = None) -> Prompts:
    rows = _rows(path, (IMAGE_COLUMN, *PROMPT_COLUMNS), limit)
    if not rows:
        raise UsageProblem(f"{WHAT} {path} has no samples")
    media = tuple(chat_of(row, f"{WHAT} {path}, sample {number}") for number, row in enumerate(rows))
    lengths = [row.get(OUTPUT_LENGTH_COLUMN) for row in rows]
    output_lengths = None
    if all(n is not None for n in lengths):
        output_lengths = answer_lengths(lengths, f"{WHAT} {path}", OUTPUT_LENGTH_COLUMN)
    return Prompts(
        path,
        tuple(array("i") for _ in rows),  # the engine renders the chat with the model's template
        output_lengths,
        media=media,
        answer_payload=answer_payload,
    )


def ground_truths(path: Path) -> list[GroundTruth]:
    """Each sample's expected category, brand and second-hand flag, by sample number."""
    truths = []
    for number, row in enumerate(_rows(path, TRUTH_COLUMNS, None)):
        category, brand, secondhand = (row[column] for column in TRUTH_COLUMNS)
        if not isinstance(category, str) or not isinstance(brand, str) or not isinstance(secondhand, bool):
            raise UsageProblem(
                f"{WHAT} {path}, sample {number}: the ground truths must be a category and a brand "
                "(text) and is_secondhand (true or false)"
            )
        truths.append(GroundTruth(category, brand, secondhand))
    return truths


SPLIT_KEY = "_split"  # synthetic records name their split here


def write_dataset(folder: Path, records: list[dict[str, object]]) -> None:
    """Records into one shard per split (data/train-00000-of-00001.parquet, ...), as a snapshot has them."""
    columns = (*COLUMNS, OUTPUT_LENGTH_COLUMN)
    for split in SPLITS:
        part = [record for record in records if record[SPLIT_KEY] == split]
        if part:
            write_parquet_dataframe(folder / "data" / f"{split}-00000-of-00001.parquet", part, columns)
