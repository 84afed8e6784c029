"""What a sample carries besides prompt token ids: a clip of audio to transcribe (whisper), or a chat whose
messages hold images (qwen3-vl-235b-a22b). Loaded into memory once, with the prompts (`harness.prompts`).

Engines turn these into their own inputs (vLLM's multi-modal prompts, an OpenAI chat request); the
synthetic engine only needs `media_key`, which names a sample's content for a demo model's answers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True, eq=False)
class AudioClip:
    """Mono audio as float32 in [-1, 1], as librosa.load gives the reference's QSL."""

    waveform: np.ndarray
    sampling_rate: int

    @property
    def seconds(self) -> float:
        return len(self.waveform) / self.sampling_rate


@dataclass(frozen=True, slots=True, eq=False)
class ImageChat:
    """OpenAI chat messages as the reference builds them, images inline as base64 data URLs; `images` are
    the same images' file bytes, in message order, for engines that take images rather than URLs."""

    messages: tuple[dict[str, Any], ...]
    images: tuple[bytes, ...]


Media = AudioClip | ImageChat


def media_key(media: Media) -> str:
    """SHA-256 of a sample's content: how a demo model's answers.json names the sample."""
    digest = hashlib.sha256()
    if isinstance(media, AudioClip):
        digest.update(f"audio {media.sampling_rate}\n".encode())
        digest.update(np.ascontiguousarray(media.waveform, dtype=np.float32).tobytes())
    else:
        digest.update(json.dumps(media.messages, sort_keys=True, separators=(",", ":")).encode())
    return digest.hexdigest()


def pil_images(chat: ImageChat) -> list[Any]:
    """The chat's images decoded by Pillow (what vLLM's in-process engines take)."""
    from io import BytesIO

    from PIL import Image

    images = []
    for data in chat.images:
        image = Image.open(BytesIO(data))
        image.load()
        images.append(image)
    return images


def image_pixel_limits(processor: dict[str, Any]) -> tuple[int, int] | None:
    """The fewest and most pixels an image processor resizes an image to, from its preprocessor_config.json
    (Qwen's: `size` {"shortest_edge", "longest_edge"}, or the older `min_pixels` and `max_pixels`); None where
    it states no limits."""
    size = processor.get("size") or {}
    try:
        return (
            int(size.get("shortest_edge", processor.get("min_pixels"))),
            int(size.get("longest_edge", processor.get("max_pixels"))),
        )
    except (AttributeError, TypeError, ValueError):
        return None
