"""qwen3-vl-235b-a22b's stand-ins: product records with generated photos, and a demo model.

Records follow the real catalogue: a title, a description (some with HTML in it, as shop descriptions
have), a handful of candidate categories in Google's product taxonomy style, one of them the truth, a
brand (sometimes none) and a second-hand flag. The lengths follow the real catalogue's profile
(profile.json, read off the reference's notebook): each photo's visual tokens and each chat's text tokens are
drawn from its histograms, the photo made a square JPEG of that many 32-pixel patches (a plain backdrop with
a coloured object), the description as long as the drawn text needs. Answers are the JSON the model gives
(Red Hat's v6.0 logs: about 140 characters, 38 tokens), written with json.dumps(indent=2) as those are.
"""

from __future__ import annotations

import json
import math
import random
from functools import cache
from io import BytesIO
from pathlib import Path
from typing import Any

from harness.benchmarks.demo_text import write_text_demo_model
from harness.benchmarks.qwen3_vl_235b_a22b.dataset import (
    IMAGE_COLUMN,
    OUTPUT_LENGTH_COLUMN,
    SPLIT_KEY,
    chat_of,
)
from harness.stand_in_models import prompt_key
from submitter.rounds.models import GenerationRules

_TAXONOMY = {
    "Apparel & Accessories": {
        "Clothing": ["Activewear > Sweatpants", "Shirts & Tops > Polo Shirts", "Outerwear > Coats & Jackets"],
        "Jewelry": ["Rings", "Necklaces", "Watches"],
    },
    "Home & Garden": {
        "Decor": ["Wallpaper", "Vases", "Clocks > Wall Clocks"],
        "Kitchen & Dining": ["Cookware > Frying Pans", "Tableware > Drinkware > Mugs"],
    },
    "Health & Beauty": {
        "Personal Care": ["Cosmetics > Makeup > Lip Makeup > Lip Liners", "Hair Care > Shampoo"],
    },
    "Hardware": {"Tools": ["Hammers", "Mattocks & Pickaxes > Pickaxes", "Drills > Cordless Drills"]},
    "Sporting Goods": {"Outdoor Recreation": ["Cycling > Bicycles", "Camping > Tents"]},
    "Animals & Pet Supplies": {"Pet Supplies": ["Dog Supplies > Dog Beds", "Fish Supplies > Fish Food"]},
}
_CATEGORIES = [
    f"{top} > {middle} > {leaf}"
    for top, middles in _TAXONOMY.items()
    for middle, leaves in middles.items()
    for leaf in leaves
]
_BRANDS = ["Aristocrat", "PondMAX", "COLORGRAM", "little giant", "Schumacher", "Northwind", "Kestrel", ""]
_WORDS = [
    "classic",
    "soft",
    "durable",
    "premium",
    "handmade",
    "organic",
    "vintage",
    "compact",
    "modern",
    "wool",
    "steel",
    "cotton",
]
_SECONDHAND_SHARE = 0.08
_PATCH_PIXELS = 32  # a visual token's side: 16-pixel patches merged 2 x 2, as the notebook counts them


@cache
def length_profile() -> dict[str, Any]:
    """The real catalogue's histograms and the measured text around a description (profile.json)."""
    return json.loads((Path(__file__).resolve().parent / "profile.json").read_text(encoding="utf-8"))


def _drawn(draw: random.Random, bins: list[list[int]]) -> int:
    """A count drawn from a histogram's bins ([lower, upper, samples]), evenly within its bin."""
    lower, upper, _ = draw.choices(bins, weights=[samples for *_, samples in bins])[0]
    return draw.randrange(lower, upper)


def _photo(draw: random.Random) -> bytes:
    from PIL import Image, ImageDraw

    side = max(1, round(math.sqrt(_drawn(draw, length_profile()["visual_token_bins"])))) * _PATCH_PIXELS
    image = Image.new("RGB", (side, side), tuple(draw.randrange(200, 256) for _ in range(3)))
    drawing = ImageDraw.Draw(image)
    box = (side // 5, side // 5, side * 4 // 5, side * 4 // 5)
    colour = tuple(draw.randrange(0, 200) for _ in range(3))
    (drawing.ellipse if draw.random() < 0.5 else drawing.rectangle)(box, fill=colour)
    saved = BytesIO()
    image.save(saved, format="JPEG", quality=90)
    return saved.getvalue()


def _description(draw: random.Random, words: list[str]) -> str:
    """As many words as the chat's drawn text tokens leave for the description, at least ten."""
    shape = length_profile()
    left = _drawn(draw, shape["text_token_bins"]) - shape["text_around_the_description"]
    count = max(10, round(left / shape["tokens_per_description_word"]))
    text = " ".join(draw.choice(_WORDS) for _ in range(count))
    if draw.random() < 0.2:  # shop descriptions often carry their HTML
        return f'<div class="product"><p>{" ".join(words)}</p><p>{text}</p></div>'
    return f"{' '.join(words).capitalize()}. {text}."


def synthesize_records(count: int, generation: GenerationRules, seed: int) -> list[dict[str, object]]:
    draw = random.Random(seed)
    records: list[dict[str, object]] = []
    for number in range(count):
        truth = draw.choice(_CATEGORIES)
        candidates = draw.sample([c for c in _CATEGORIES if c != truth], 5)
        candidates.insert(draw.randrange(6), truth)
        words = [draw.choice(_WORDS) for _ in range(3)] + [truth.rsplit(" > ", 1)[1].lower()]
        records.append(
            {
                IMAGE_COLUMN: {"bytes": _photo(draw), "path": f"{number}.jpg"},
                "product_title": " ".join(words).title(),
                "product_description": _description(draw, words),
                "potential_product_categories": candidates,
                "ground_truth_category": truth,
                "ground_truth_brand": draw.choice(_BRANDS),
                "ground_truth_is_secondhand": draw.random() < _SECONDHAND_SHARE,
                OUTPUT_LENGTH_COLUMN: length_profile()["tokens_per_answer"] + draw.randrange(-8, 9),
                SPLIT_KEY: "train" if number < count * 0.8 else "test",
            }
        )
    return records


def _answer(record: dict[str, object], draw: random.Random) -> str:
    """The demo model's JSON: the right category nine times in ten, else one sharing its top level."""
    category = str(record["ground_truth_category"])
    if draw.random() < 0.1:
        top = category.split(" > ")[0]
        category = draw.choice([c for c in _CATEGORIES if c.startswith(top)] or [category])
    answer = {
        "category": category,
        "brand": record["ground_truth_brand"],
        "is_secondhand": record["ground_truth_is_secondhand"],
    }
    return json.dumps(answer, indent=2)


def write_demo_model(
    directory: Path, records: list[dict[str, object]], max_tokens: int, seed: int = 1
) -> Path:
    """A tokenizer over the answers and each sample's answer by its chat (as the engine sees it)."""
    draw = random.Random(seed)
    answers = [_answer(record, draw) for record in records]
    keys = [prompt_key((), chat_of(record, f"record {n}")) for n, record in enumerate(records)]
    return write_text_demo_model(directory, answers, max_tokens, keys=keys)
