"""Each benchmark's architecture file is the real model: its size, computed from config.json alone, is the
published one; and what the KV cache holds per token is what the attention layout implies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.model_size import Precision, model_size
from harness.stand_in_models import architecture_file, stand_in_config
from submitter.errors import UsageProblem
from submitter.systems.validate import load_descriptor

# Published parameter counts: the checkpoints' safetensors metadata on the Hugging Face hub (model cards
# round them: 70B, 46.7B, 405B, 117B, 236B, 1.55B, 671B).
PUBLISHED_PARAMETERS = {
    "llama3.1-8b": 8_030_261_248,
    "llama2-70b": 68_976_648_192,
    "mixtral-8x7b": 46_702_792_704,
    "llama3.1-405b": 405_853_388_800,
    "gpt-oss-120b": 116_829_156_672,  # gpt-oss model card: 116.83B total
    "qwen3-vl-235b-a22b": 235_670_022_896,  # Qwen3-235B-A22B's 235,093,634,560 plus the vision tower
    "whisper": 1_543_490_560,
}
GIB = 1 << 30


def _config(benchmark: str) -> dict:
    return json.loads(architecture_file(benchmark).read_text(encoding="utf-8"))


@pytest.mark.parametrize(("benchmark", "parameters"), sorted(PUBLISHED_PARAMETERS.items()))
def test_each_architecture_has_the_published_number_of_parameters(benchmark: str, parameters: int) -> None:
    assert model_size(_config(benchmark)).parameters == parameters


def test_deepseek_r1_with_its_prediction_layer_has_the_published_fp8_weights() -> None:
    """DeepSeek-R1's checkpoint holds 680,571,043,840 FP8 values (safetensors metadata, F8_E4M3): the 61
    layers vLLM serves plus the multi-token-prediction layer, a MoE layer of the same shape."""
    config = _config("deepseek-r1")
    served = model_size(config)
    with_prediction_layer = model_size({**config, "num_hidden_layers": config["num_hidden_layers"] + 1})
    assert with_prediction_layer.linear + with_prediction_layer.experts == 680_571_043_840
    assert round(served.parameters / 1e9) == 671  # "671B total parameters" (the model card)


def test_weights_in_the_published_precision_have_the_published_size() -> None:
    gpt_oss = _config("gpt-oss-120b")
    # The model card's "Checkpoint Size 60.8GiB": MXFP4 experts (4.25 bits each), the rest in bf16.
    assert model_size(gpt_oss).weight_bytes(Precision.of(gpt_oss)) / GIB == pytest.approx(60.8, abs=0.05)
    mixtral = _config("mixtral-8x7b")
    # Mixtral's bf16 checkpoint: total_size 93,405,585,408 bytes in its safetensors index.
    assert model_size(mixtral).weight_bytes(Precision.of(mixtral)) == 93_405_585_408
    # FP8 halves everything but the embeddings, head, norms and routers.
    llama, _ = stand_in_config("llama2-70b-99", precision="published")
    size = model_size(llama)
    fp8 = size.weight_bytes(Precision.of(llama))
    assert fp8 == size.linear + 2 * size.kept
    assert fp8 == model_size(_config("llama2-70b")).weight_bytes(Precision.of({}, quantization="fp8"))


def test_a_token_s_kv_cache_follows_the_attention_layout() -> None:
    # Llama-2-70B: 80 layers x 8 KV heads x 128 x (K and V) x 2 bytes = 320 KiB a token.
    llama = model_size(_config("llama2-70b"))
    assert llama.kv_cache_bytes(1, 1, 1, 2.0) == 80 * 8 * 128 * 2 * 2 == 320 << 10
    assert llama.kv_cache_bytes(1000, 2, 1, 1.0) == 1000 * 80 * 4 * 128 * 2  # TP=2 halves the heads, FP8
    assert llama.kv_cache_bytes(1, 16, 1, 2.0) == 80 * 1 * 128 * 2 * 2  # 8 heads over 16 ranks: one each
    assert llama.kv_cache_bytes(1, 1, 4, 2.0) == 20 * 8 * 128 * 2 * 2  # a pipeline stage holds 20 layers
    # DeepSeek's latent attention: one 512 + 64 wide vector a layer, on every tensor-parallel rank.
    deepseek = model_size(_config("deepseek-r1"))
    assert deepseek.kv_cache_bytes(1, 8, 1, 1.0) == 61 * (512 + 64)
    # gpt-oss: half its 36 layers keep only a 128-token window.
    gpt_oss = model_size(_config("gpt-oss-120b"))
    full, window = 18 * 8 * 64 * 2 * 2, 18 * 8 * 64 * 2 * 2
    assert gpt_oss.kv_cache_bytes(4096, 1, 1, 2.0) == 4096 * full + 128 * window
    # whisper: decoder self-attention per token, and the encoder's 1500 frames for cross-attention.
    whisper = model_size(_config("whisper"))
    per_layer = 20 * 64 * 2 * 2
    assert whisper.kv_cache_bytes(448, 1, 1, 2.0) == 32 * per_layer * (448 + 1500)


def test_precision_comes_from_the_checkpoint_before_the_engine_argument() -> None:
    assert Precision.of({"quantization_config": {"quant_method": "mxfp4"}}).formats == {"experts": "mxfp4"}
    qwen, _ = stand_in_config("qwen3-vl-235b-a22b", precision="published")
    assert Precision.of(qwen, quantization=None).formats == {"linear": "fp8", "experts": "fp8"}
    assert Precision.of({}, quantization="fp8").source == "quantization fp8"
    assert Precision.of({}).formats == {}
    nvfp4 = {"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}}
    assert Precision.of(nvfp4).formats == {"linear": "nvfp4", "experts": "nvfp4"}


def test_stand_ins_keep_the_architecture_and_take_the_published_precision() -> None:
    whisper, marker = stand_in_config("whisper", precision="published")
    assert (
        whisper["torch_dtype"] == "bfloat16" and marker["weights"] == "bfloat16, as openai/whisper-large-v3"
    )
    assert model_size(whisper).parameters == PUBLISHED_PARAMETERS["whisper"]
    gpt_oss, _ = stand_in_config("gpt-oss-120b", precision="published")  # published quantised: kept
    assert gpt_oss["quantization_config"]["quant_method"] == "mxfp4"
    shallow, marker = stand_in_config("qwen3-vl-235b-a22b", precision="published", layers=24)
    assert (marker["layers"], marker["model_layers"]) == (24, 94)
    assert shallow["text_config"]["num_hidden_layers"] == 24
    with pytest.raises(UsageProblem, match="at least 3: the vision tower feeds"):
        stand_in_config("qwen3-vl-235b-a22b", layers=2)


def test_the_llama3_1_8b_stand_in_runs_the_kernels_of_red_hat_s_checkpoint() -> None:
    """What picks vLLM's kernels: FP8 weights and activations, per tensor, both static (calibrated scales, so
    no abs-max pass before each GEMM), lm_head left in 16 bits; and the bench descriptor runs every scenario
    with the FP8 KV cache Red Hat ran and no quantisation at load that would override the checkpoint's."""
    config, marker = stand_in_config("llama3.1-8b", precision="published")
    quantization = config["quantization_config"]
    assert (quantization["quant_method"], quantization["ignore"]) == ("compressed-tensors", ["lm_head"])
    (group,) = quantization["config_groups"].values()
    for tensor in ("weights", "input_activations"):
        scheme = group[tensor]
        assert (scheme["type"], scheme["num_bits"], scheme["strategy"], scheme["dynamic"]) == (
            "float",
            8,
            "tensor",
            False,
        ), tensor
    assert marker["weights"] == "compressed-tensors, as RedHatAI/Meta-Llama-3.1-8B-Instruct-FP8"
    bench = load_descriptor(Path(__file__).resolve().parents[1] / "bench" / "systems" / "gpu_dummy.json")
    setup = bench.benchmarks["llama3.1-8b"]
    assert setup.quantization is None
    assert {name: setup.engine_args_for(name)["kv_cache_dtype"] for name in setup.scenarios} == {
        "Offline": "fp8",
        "Server": "fp8",
        "Interactive": "fp8",
    }
    with pytest.raises(UsageProblem, match=r"known: deepseek-r1, gpt-oss-120b, .*, whisper$"):
        architecture_file("llama4")


def test_the_profiling_pass_counts_the_fused_moe_kernel_s_workspaces() -> None:
    """vLLM's Triton fused_moe keeps, per token and chosen expert, the gate and up projections' output and
    the activation's (or the hidden width where that is wider) while the experts run."""
    tokens = 16_384
    mixtral = model_size(_config("mixtral-8x7b"))  # hidden 4,096; 2 of 8 experts of width 14,336
    # One GPU: gate-up 28,672 and activation 14,336 elements for each of the 2 experts, beside the four
    # hidden-wide vectors (hidden state, residual, attention projections), all in 16 bits.
    assert mixtral.activation_bytes(tokens, 1) == tokens * 2 * (4 * 4_096 + 2 * (28_672 + 14_336))
    # Two ranks halve the experts' widths, not the hidden one.
    assert mixtral.activation_bytes(tokens, 2) == tokens * 2 * (4 * 4_096 + 2 * (14_336 + 7_168))
    # qwen3-vl's experts are narrow (1,536): over four ranks the hidden width (4,096) sizes both workspaces.
    qwen = model_size(_config("qwen3-vl-235b-a22b"))
    assert qwen.activation_bytes(tokens, 4) == tokens * 2 * (4 * 4_096 + 8 * (4_096 + 4_096))
    # A dense model has no such workspace: the feed-forward's gate-up output, split over the ranks.
    llama = model_size(_config("llama2-70b"))
    assert llama.activation_bytes(tokens, 2) == tokens * 2 * (4 * 8_192 + 2 * 28_672 // 2)


def test_a_vision_tower_s_profiling_pass_holds_the_largest_images() -> None:
    """vLLM encodes the largest image the processor allows and keeps its pixels (float32) and its tokens'
    outputs (16 bits) while the language model's pass runs; as many images as the batch's tokens hold."""
    encoder = model_size(_config("qwen3-vl-235b-a22b")).encoder
    assert encoder is not None
    # 16,777,216 pixels: 65,536 patches of 16 x 16 pixels, 3 channels, 2 frames; merged 2 x 2 into 16,384
    # tokens, each leaving the main merger's 4,096 values and three deepstack layers' 4,096 each.
    one_image = 65_536 * (3 * 2 * 16 * 16) * 4 + 16_384 * (4 * 4_096) * 2
    assert encoder.held_bytes(16_777_216, 16_384) == one_image
    assert encoder.held_bytes(16_777_216, 8_192) == one_image  # never fewer than one image
    assert encoder.held_bytes(16_777_216, 32_768) == 2 * one_image
    assert model_size(_config("mixtral-8x7b")).encoder is None
