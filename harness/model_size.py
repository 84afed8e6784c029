"""How big a model is, from its config.json alone: parameters by kind, weight bytes in a precision, and the
KV cache one sequence needs. Preflight reads it to prove that a topology holds the model before an engine
starts, and the tests hold each benchmark's architecture to its published parameter count.

    size = model_size(json.loads(Path("config.json").read_text()))
    size.parameters                      # 68,976,648,192 for Llama-2-70b
    size.weight_bytes(Precision.of(config, quantization="fp8"))

Parameters are grouped by what a quantised checkpoint does with them: `linear` (the decoder's dense
projections), `experts` (MoE expert projections), and `kept` (embeddings, the output head, norms, biases,
routers, a vision tower: left in 16 bits by every FP8 and MXFP4 checkpoint the benchmarks use).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from submitter.errors import UsageProblem

Config = Mapping[str, Any]
# Bytes per parameter of each storage format; MXFP4 packs two 4-bit values a byte plus one 8-bit scale
# per block of 32 (the OCP Microscaling format that gpt-oss-120b ships in).
_FORMAT_BYTES = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp32": 4.0,
    "fp8": 1.0,
    "mxfp4": 0.5 + 1 / 32,
    "nvfp4": 0.5 + 1 / 16,
}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


@dataclass(frozen=True)
class AttentionLayer:
    """What one decoder layer keeps in the KV cache per token: `kv_heads` heads of `head_width` elements
    for K and V together (split over tensor-parallel ranks), or, for latent attention (MLA), one
    `head_width`-wide vector that every rank holds whole (`kv_heads` None). `window`: a sliding window
    caps the tokens kept; `fixed_tokens`: cross-attention keeps the encoder's output, whatever the answer."""

    kv_heads: int | None
    head_width: int
    window: int | None = None
    fixed_tokens: int | None = None

    def elements_per_rank(self, tokens: int, tensor_parallel: int) -> int:
        heads = 1 if self.kv_heads is None else math.ceil(self.kv_heads / tensor_parallel)
        kept = self.fixed_tokens if self.fixed_tokens is not None else tokens
        if self.window is not None:
            kept = min(kept, self.window)
        return heads * self.head_width * kept


@dataclass(frozen=True)
class MediaEncoder:
    """A vision tower as vLLM's profiling pass meets it: it encodes the largest image the processor allows,
    and the pixels and the encoder's output stay in memory while the language model's pass runs (vLLM 0.26,
    `GPUModelRunner.profile_run` keeps both until it returns)."""

    patch_size: int
    input_per_patch: int  # pixel values a patch carries (channels x frames x patch x patch)
    merge: int  # patches merged into one token: spatial_merge_size squared
    output_width: int  # elements per token out of the encoder: the main merger's and each deepstack layer's

    def held_bytes(self, max_pixels: int, batched_tokens: int) -> int:
        """What the encoder's profiling pass leaves held: vLLM encodes as many of the largest images as
        max_num_batched_tokens holds (at least one); their pixels in float32, as the processor makes them,
        and their tokens' outputs in 16 bits."""
        patches = max_pixels // self.patch_size**2
        tokens = patches // self.merge
        items = max(1, batched_tokens // tokens) if tokens else 1
        return items * (patches * self.input_per_patch * 4 + tokens * self.output_width * 2)


@dataclass(frozen=True, kw_only=True)
class ModelSize:
    linear: int
    experts: int
    kept: int
    attention: tuple[AttentionLayer, ...]  # per decoder layer, the unit pipeline parallelism splits
    dtype: str  # the 16-bit type of the checkpoint's unquantised weights
    # What a forward pass holds per token in flight: the model's width and the widest feed-forward
    # activation (a MoE token's experts together), and the logits' width.
    hidden: int
    ffn_width: int
    vocabulary: int
    # Routed experts: how many a token goes to, and one expert's intermediate width (0: a dense model).
    moe_top_k: int = 0
    moe_width: int = 0
    encoder: MediaEncoder | None = None

    @property
    def parameters(self) -> int:
        return self.linear + self.experts + self.kept

    def weight_bytes(self, precision: Precision) -> int:
        quantised = {"linear": self.linear, "experts": self.experts}
        total = self.kept * _FORMAT_BYTES[self.dtype]
        for kind, count in quantised.items():
            stored = precision.formats.get(kind, self.dtype)
            total += count * _FORMAT_BYTES[stored]
        return round(total)

    def kv_cache_bytes(
        self, tokens: int, tensor_parallel: int, pipeline_parallel: int, kv_bytes: float
    ) -> int:
        """The KV cache of one sequence of `tokens` on the busiest rank (the first pipeline stage holds
        the most layers when they do not divide evenly)."""
        per_stage = math.ceil(len(self.attention) / pipeline_parallel)
        elements = sum(
            layer.elements_per_rank(tokens, tensor_parallel) for layer in self.attention[:per_stage]
        )
        return round(elements * kv_bytes)

    def activation_bytes(self, tokens: int, tensor_parallel: int) -> int:
        """The profiling pass's peak on one rank, for a batch of `tokens`, in 16 bits: each token's hidden
        state, residual and attention projections, and the wider of the feed-forward's activation (split over
        ranks) and the fused MoE kernel's two workspaces. vLLM's Triton fused_moe (0.26) keeps, per token and
        chosen expert, max(N, hidden) and max(N / 2, hidden) elements, N being the gate and up projections'
        width on the rank (2 x moe_width / tensor_parallel); the hidden width is not split."""
        per_token = 4 * self.hidden + 2 * self.ffn_width // tensor_parallel
        if self.moe_top_k:
            gate_up = 2 * self.moe_width // tensor_parallel
            workspaces = max(gate_up, self.hidden) + max(gate_up // 2, self.hidden)
            per_token = max(per_token, 4 * self.hidden + self.moe_top_k * workspaces)
        return tokens * 2 * per_token

    def weight_bytes_per_rank(
        self, precision: Precision, tensor_parallel: int, pipeline_parallel: int
    ) -> int:
        """One rank's share: every kind is split over tensor-parallel ranks (vLLM shards embeddings and
        the head by vocabulary, experts by their width), layers over pipeline stages; the stage that
        holds the rounded-up share of layers and the embeddings is the one that counts."""
        layers = len(self.attention)
        layer_share = math.ceil(layers / pipeline_parallel) / layers
        total = self.weight_bytes(precision)
        embeddings = self.vocabulary * self.hidden * _FORMAT_BYTES[self.dtype] * 2
        in_layers = max(total - embeddings, 0)
        return round((in_layers * layer_share + embeddings) / tensor_parallel)


@dataclass(frozen=True)
class Precision:
    """How a checkpoint stores each kind of parameter: {"linear": "fp8", "experts": "fp8"}; a kind not
    named stays in the checkpoint's 16-bit type."""

    formats: Mapping[str, str]
    source: str  # what said so, for the printed estimate: "quantization_config fp8", "--quantization fp8"

    @classmethod
    def of(cls, config: Config, quantization: str | None = None) -> Precision:
        """The checkpoint's own quantization_config, else vLLM's load-time `quantization`, else 16 bits."""
        found = config.get("quantization_config")
        if isinstance(found, Mapping):
            method = str(found.get("quant_method", ""))
            if method == "mxfp4":  # gpt-oss: experts only; attention, router and embeddings stay 16-bit
                return cls({"experts": "mxfp4"}, "quantization_config mxfp4")
            if method in ("fp8", "compressed-tensors", "fbgemm_fp8", "modelopt"):
                stored = "nvfp4" if "fp4" in str(found.get("quant_algo", "")).lower() else "fp8"
                return cls({"linear": stored, "experts": stored}, f"quantization_config {method}")
            raise UsageProblem(f"quantization_config quant_method {method!r} is not one preflight can size")
        if quantization in ("fp8", "fbgemm_fp8", "ptpc_fp8"):
            return cls({"linear": "fp8", "experts": "fp8"}, f"quantization {quantization}")
        if quantization:
            raise UsageProblem(f"quantization {quantization!r} is not one preflight can size (it knows fp8)")
        return cls({}, "16-bit checkpoint")


def _dtype(config: Config) -> str:
    named = config.get("torch_dtype") or config.get("dtype") or "bfloat16"
    return _DTYPES.get(str(named), "bf16")


def _heads_width(config: Config) -> tuple[int, int, int]:
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    head_dim = config.get("head_dim") or hidden // heads
    return heads, config.get("num_key_value_heads", heads), head_dim


def _attention_projections(config: Config, bias: bool = False) -> tuple[int, int]:
    """Q, K, V and O of grouped-query attention: (weights, biases)."""
    hidden = config["hidden_size"]
    heads, kv_heads, head_dim = _heads_width(config)
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    weights = hidden * q_out + 2 * hidden * kv_out + q_out * hidden
    return weights, (q_out + 2 * kv_out + hidden) if bias else 0


def _vocabulary(config: Config) -> int:
    embeddings = config["vocab_size"] * config["hidden_size"]
    return embeddings if config.get("tie_word_embeddings") else 2 * embeddings


def _gqa_layers(config: Config, windows: list[int | None] | None = None) -> tuple[AttentionLayer, ...]:
    _, kv_heads, head_dim = _heads_width(config)
    count = config["num_hidden_layers"]
    return tuple(
        AttentionLayer(kv_heads, 2 * head_dim, windows[n] if windows else None) for n in range(count)
    )


def _llama(config: Config) -> ModelSize:
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    attention, _ = _attention_projections(config)
    mlp = 3 * hidden * config["intermediate_size"]
    kept = _vocabulary(config) + layers * 2 * hidden + hidden
    return ModelSize(
        linear=layers * (attention + mlp),
        experts=0,
        kept=kept,
        attention=_gqa_layers(config),
        dtype=_dtype(config),
        hidden=hidden,
        ffn_width=config["intermediate_size"],
        vocabulary=config["vocab_size"],
    )


def _mixtral(config: Config) -> ModelSize:
    hidden, layers, experts = config["hidden_size"], config["num_hidden_layers"], config["num_local_experts"]
    attention, _ = _attention_projections(config)
    expert_weights = experts * 3 * hidden * config["intermediate_size"]
    router = hidden * experts
    kept = _vocabulary(config) + layers * (2 * hidden + router) + hidden
    return ModelSize(
        linear=layers * attention,
        experts=layers * expert_weights,
        kept=kept,
        attention=_gqa_layers(config),
        dtype=_dtype(config),
        hidden=hidden,
        ffn_width=config["num_experts_per_tok"] * config["intermediate_size"],
        vocabulary=config["vocab_size"],
        moe_top_k=config["num_experts_per_tok"],
        moe_width=config["intermediate_size"],
    )


def _qwen3_moe_text(config: Config) -> ModelSize:
    hidden, layers, experts = config["hidden_size"], config["num_hidden_layers"], config["num_experts"]
    attention, _ = _attention_projections(config)
    head_dim = _heads_width(config)[2]
    dense_layers = set(config.get("mlp_only_layers", []))
    expert_layers = layers - len(dense_layers)
    experts_total = expert_layers * experts * 3 * hidden * config["moe_intermediate_size"]
    dense = len(dense_layers) * 3 * hidden * config["intermediate_size"]
    routers = expert_layers * hidden * experts
    norms = layers * (2 * hidden + 2 * head_dim) + hidden  # input, post-attention, q_norm, k_norm
    kept = _vocabulary(config) + routers + norms
    return ModelSize(
        linear=layers * attention + dense,
        experts=experts_total,
        kept=kept,
        attention=_gqa_layers(config),
        dtype=_dtype(config),
        hidden=hidden,
        ffn_width=max(
            config["intermediate_size"], config["num_experts_per_tok"] * config["moe_intermediate_size"]
        ),
        vocabulary=config["vocab_size"],
        moe_top_k=config["num_experts_per_tok"],
        moe_width=config["moe_intermediate_size"],
    )


def _qwen3_vl_vision(vision: Config) -> int:
    """The vision tower: patch embedding, position table, ViT blocks, and the mergers that map merged
    patches to the language model's width (the main one and one per deepstack layer)."""
    width, ffn, depth = vision["hidden_size"], vision["intermediate_size"], vision["depth"]
    patch = vision["in_channels"] * vision["temporal_patch_size"] * vision["patch_size"] ** 2 * width + width
    positions = vision["num_position_embeddings"] * width
    block = (2 * 2 * width) + (width * 3 * width + 3 * width) + (width * width + width)
    block += width * ffn + ffn + ffn * width + width
    merged = width * vision["spatial_merge_size"] ** 2
    out = vision["out_hidden_size"]
    projection = merged * merged + merged + merged * out + out
    main_merger = 2 * width + projection  # its LayerNorm is on the patches before they are merged
    deepstack = len(vision.get("deepstack_visual_indexes", [])) * (2 * merged + projection)
    return patch + positions + depth * block + main_merger + deepstack


def _qwen3_vl_moe(config: Config) -> ModelSize:
    text = _qwen3_moe_text(
        {**config["text_config"], "tie_word_embeddings": config.get("tie_word_embeddings")}
    )
    vision = config["vision_config"]
    encoder = MediaEncoder(
        patch_size=vision["patch_size"],
        input_per_patch=vision["in_channels"] * vision["temporal_patch_size"] * vision["patch_size"] ** 2,
        merge=vision["spatial_merge_size"] ** 2,
        output_width=vision["out_hidden_size"] * (1 + len(vision.get("deepstack_visual_indexes", []))),
    )
    return dataclasses.replace(text, kept=text.kept + _qwen3_vl_vision(vision), encoder=encoder)


def _gpt_oss(config: Config) -> ModelSize:
    hidden, layers, experts = config["hidden_size"], config["num_hidden_layers"], config["num_local_experts"]
    ffn = config["intermediate_size"]
    attention, attention_bias = _attention_projections(config, bias=True)
    sinks = config["num_attention_heads"]
    # Expert weights are quantised; their biases, like the router, are not.
    expert_weights = experts * (hidden * 2 * ffn + ffn * hidden)
    expert_biases = experts * (2 * ffn + hidden)
    router = hidden * experts + experts
    kept = (
        _vocabulary(config) + layers * (attention_bias + sinks + router + expert_biases + 2 * hidden) + hidden
    )
    window = config.get("sliding_window")
    windows = [window if kind == "sliding_attention" else None for kind in config["layer_types"]]
    return ModelSize(
        linear=layers * attention,
        experts=layers * expert_weights,
        kept=kept,
        attention=_gqa_layers(config, windows),
        dtype=_dtype(config),
        hidden=hidden,
        ffn_width=config["experts_per_token"] * 2 * ffn,
        vocabulary=config["vocab_size"],
        moe_top_k=config["experts_per_token"],
        moe_width=ffn,
    )


def _deepseek_v3(config: Config) -> ModelSize:
    """Multi-head latent attention and DeepSeekMoE; the multi-token-prediction layer is left out, as vLLM
    loads it only for speculative decoding."""
    hidden, layers, heads = config["hidden_size"], config["num_hidden_layers"], config["num_attention_heads"]
    q_rank, kv_rank = config["q_lora_rank"], config["kv_lora_rank"]
    nope, rope, v_dim = config["qk_nope_head_dim"], config["qk_rope_head_dim"], config["v_head_dim"]
    attention = (
        hidden * q_rank
        + q_rank * heads * (nope + rope)
        + hidden * (kv_rank + rope)
        + kv_rank * heads * (nope + v_dim)
        + heads * v_dim * hidden
    )
    dense_layers = config["first_k_dense_replace"]
    moe_layers = layers - dense_layers
    expert_width = config["moe_intermediate_size"]
    routed = config["n_routed_experts"]
    shared = config["n_shared_experts"] * 3 * hidden * expert_width
    linear = (
        layers * attention + dense_layers * 3 * hidden * config["intermediate_size"] + moe_layers * shared
    )
    experts = moe_layers * routed * 3 * hidden * expert_width
    router = hidden * routed + routed  # and its score-correction bias
    norms = 2 * hidden + q_rank + kv_rank
    kept = _vocabulary(config) + layers * norms + moe_layers * router + hidden
    return ModelSize(
        linear=linear,
        experts=experts,
        kept=kept,
        attention=tuple(AttentionLayer(None, kv_rank + rope) for _ in range(layers)),
        dtype=_dtype(config),
        hidden=hidden,
        ffn_width=max(config["intermediate_size"], config["num_experts_per_tok"] * expert_width),
        vocabulary=config["vocab_size"],
        moe_top_k=config["num_experts_per_tok"],
        moe_width=expert_width,
    )


def _whisper(config: Config) -> ModelSize:
    """Encoder (two convolutions, positions, layers) and decoder (tokens, positions, layers with cross-
    attention); the output projection is the token embedding's. Cross-attention keeps the encoder's
    1500 frames per sequence."""
    width, mels = config["d_model"], config["num_mel_bins"]
    attention = 4 * width * width + 3 * width  # K has no bias
    encoder_ffn, decoder_ffn = config["encoder_ffn_dim"], config["decoder_ffn_dim"]

    def ffn(size: int) -> int:
        return 2 * width * size + size + width

    encoder_layers, decoder_layers = config["encoder_layers"], config["decoder_layers"]
    convolutions = mels * width * 3 + width + width * width * 3 + width
    encoder = convolutions + config["max_source_positions"] * width + 2 * width
    encoder += encoder_layers * (attention + ffn(encoder_ffn) + 2 * 2 * width)
    decoder = (config["vocab_size"] + config["max_target_positions"]) * width + 2 * width
    decoder += decoder_layers * (2 * attention + ffn(decoder_ffn) + 3 * 2 * width)
    head_width = 2 * width // config["decoder_attention_heads"]
    heads = config["decoder_attention_heads"]
    attention_layers = tuple(
        layer
        for _ in range(decoder_layers)
        for layer in (
            AttentionLayer(heads, head_width),
            AttentionLayer(heads, head_width, fixed_tokens=config["max_source_positions"]),
        )
    )
    return ModelSize(
        linear=0,
        experts=0,
        kept=encoder + decoder,
        attention=attention_layers,
        dtype=_dtype(config),
        hidden=width,
        ffn_width=decoder_ffn,
        vocabulary=config["vocab_size"],
    )


_FAMILIES: dict[str, Callable[[Config], ModelSize]] = {
    "llama": _llama,
    "mixtral": _mixtral,
    "qwen3_vl_moe": _qwen3_vl_moe,
    "gpt_oss": _gpt_oss,
    "deepseek_v3": _deepseek_v3,
    "whisper": _whisper,
}


def model_size(config: Config) -> ModelSize:
    family = config.get("model_type")
    sizer = _FAMILIES.get(str(family))
    if sizer is None:
        raise UsageProblem(
            f"config.json model_type {family!r}: preflight sizes {', '.join(sorted(_FAMILIES))}; "
            "others run without the memory estimate"
        )
    try:
        return sizer(config)
    except (KeyError, TypeError) as exc:
        raise UsageProblem(f"config.json of model_type {family} lacks {exc} that its size needs") from None
