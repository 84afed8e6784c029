"""qwen3-vl-235b-a22b's stand-ins: product records with generated photos, and a demo model.

Records follow the real catalogue: a title, a description (some with HTML in it, as shop descriptions
have), a handful of candidate categories in Google's product taxonomy style, one of them the truth, a
brand (sometimes none) and a second-hand flag. The photos are JPEGs of product-photo sizes (assumed:
square and 4:3 shots of 600 to 1,600 pixels a side; the real size profile is not published), each a
plain backdrop with a coloured object. Answers are the JSON the model gives (Red Hat's v6.0 logs: about
140 characters, 38 tokens), written with json.dumps(indent=2) as those are.
"""

from __future__ import annotations

import json
import random
from io import BytesIO
from pathlib import Path

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
_SIDES = (600, 800, 1000, 1200, 1600)
_SECONDHAND_SHARE = 0.08
_TOKENS_PER_ANSWER = 38


def _photo(draw: random.Random) -> bytes:
    from PIL import Image, ImageDraw

    side = draw.choice(_SIDES)
    size = (side, side) if draw.random() < 0.6 else (side, side * 3 // 4)
    image = Image.new("RGB", size, tuple(draw.randrange(200, 256) for _ in range(3)))
    drawing = ImageDraw.Draw(image)
    width, height = size
    box = (width // 5, height // 5, width * 4 // 5, height * 4 // 5)
    colour = tuple(draw.randrange(0, 200) for _ in range(3))
    (drawing.ellipse if draw.random() < 0.5 else drawing.rectangle)(box, fill=colour)
    saved = BytesIO()
    image.save(saved, format="JPEG", quality=90)
    return saved.getvalue()


def _description(draw: random.Random, words: list[str]) -> str:
    text = " ".join(draw.choice(_WORDS) for _ in range(draw.randrange(20, 80)))
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
                OUTPUT_LENGTH_COLUMN: _TOKENS_PER_ANSWER + draw.randrange(-8, 9),
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
