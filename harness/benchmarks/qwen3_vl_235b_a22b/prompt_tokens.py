"""How many tokens a sample's prompt holds in the engine's KV cache. The engine renders the chat itself, so
the samples carry no token ids: this counts the chat's text as Qwen's chat template frames it, with the
model's own tokenizer, and each image's tokens, one per merged patch after the processor resizes the image
(Qwen2-VL's `smart_resize`, which Qwen3-VL's image processor keeps). Preflight's memory plan reads it.
"""

from __future__ import annotations

import math
from io import BytesIO
from pathlib import Path

from harness.media import ImageChat, image_pixel_limits
from harness.prompts import Prompts
from submitter.errors import UsageProblem
from submitter.hub import checkpoint_json


def image_tokens(width: int, height: int, patch: int, merge: int, min_pixels: int, max_pixels: int) -> int:
    """Tokens of one image: both sides rounded to whole merged patches, the area then scaled into
    [min_pixels, max_pixels] keeping the aspect ratio, one token per merged patch."""
    factor = patch * merge
    rounded_height = round(height / factor) * factor
    rounded_width = round(width / factor) * factor
    if rounded_height * rounded_width > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        rounded_height = max(factor, math.floor(height / beta / factor) * factor)
        rounded_width = max(factor, math.floor(width / beta / factor) * factor)
    elif rounded_height * rounded_width < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        rounded_height = math.ceil(height * beta / factor) * factor
        rounded_width = math.ceil(width * beta / factor) * factor
    return (rounded_height // factor) * (rounded_width // factor)


def framed_text(chat: ImageChat) -> str:
    """The chat as Qwen's template lays it out, each image's tokens left out but not its frame."""
    parts = []
    for message in chat.messages:
        content = message["content"]
        items = [{"type": "text", "text": content}] if isinstance(content, str) else content
        body = "".join(
            item["text"] if item["type"] == "text" else "<|vision_start|><|vision_end|>" for item in items
        )
        parts.append(f"<|im_start|>{message['role']}\n{body}<|im_end|>\n")
    return "".join(parts) + "<|im_start|>assistant\n"


def engine_prompt_lengths(prompts: Prompts, model: Path | None) -> tuple[int, ...] | None:
    """Each sample's prompt tokens in the engine; None where the model folder lacks its tokenizer,
    config.json or preprocessor_config.json (a hub name, a folder without them)."""
    if model is None or prompts.media is None:
        return None
    config = checkpoint_json(model, "config.json")
    processor = checkpoint_json(model, "preprocessor_config.json")
    if config is None or processor is None or not (model / "tokenizer.json").is_file():
        return None
    limits = image_pixel_limits(processor)
    if limits is None:
        return None
    min_pixels, max_pixels = limits
    try:
        vision = config["vision_config"]
        patch, merge = int(vision["patch_size"]), int(vision["spatial_merge_size"])
    except (KeyError, TypeError, ValueError):
        return None
    from PIL import Image
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(model / "tokenizer.json"))
    except Exception as exc:  # the Rust library raises its own exception types
        raise UsageProblem(
            f"{model / 'tokenizer.json'} cannot be loaded as a tokenizer ({exc}); the engine would fail on "
            "it too: copy the checkpoint's tokenizer.json again"
        ) from None
    chats = [chat for chat in prompts.media if isinstance(chat, ImageChat)]
    encoded = tokenizer.encode_batch([framed_text(chat) for chat in chats], add_special_tokens=False)
    lengths = []
    for chat, text in zip(chats, encoded, strict=True):
        sizes = [Image.open(BytesIO(image)).size for image in chat.images]  # reads the header only
        pictures = sum(image_tokens(w, h, patch, merge, min_pixels, max_pixels) for w, h in sizes)
        lengths.append(len(text.ids) + pictures)
    return tuple(lengths)
