"""What the two in-process vLLM engines share: engine arguments, sampling parameters and prompts."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from harness.engines.base import EngineSpec, Generation, Sample
from harness.media import AudioClip, ImageChat, pil_images


def engine_keyword_arguments(spec: EngineSpec, harness_args: Iterable[str] = ()) -> dict[str, Any]:
    """vLLM engine arguments: the descriptor's, less the harness's own keys, plus model and parallelism."""
    arguments = {key: value for key, value in spec.args.items() if key not in set(harness_args)}
    arguments["model"] = spec.model
    arguments["tensor_parallel_size"] = spec.tensor_parallel_size
    if spec.pipeline_parallel_size > 1:
        arguments["pipeline_parallel_size"] = spec.pipeline_parallel_size
    if spec.quantization:
        arguments["quantization"] = spec.quantization
    if spec.renderer_workers:
        # Inputs made on several threads: vLLM's processor cache is not thread-safe, and vLLM refuses a
        # renderer pool beside it (it is off for encoder-decoder models such as whisper anyway).
        arguments["mm_processor_cache_gb"] = 0
    if spec.dummy_weights:
        # The real architecture with random weights; prompts are token ids, so no tokenizer is needed,
        # except where audio or images go through the model's processor, which holds one.
        arguments["load_format"] = "dummy"
        if spec.media is None:
            arguments["skip_tokenizer_init"] = True
    return arguments


class SamplingForSamples:
    """Each sample's SamplingParams: the one shared set, or, in a dummy-weight run over a dataset that
    gives reference answer lengths, one set per exact length (made once each)."""

    def __init__(self, generation: Generation, streaming: bool) -> None:
        self._generation = generation
        self._streaming = streaming
        self._shared = sampling_params(generation, streaming)
        self._by_length: dict[int, Any] = {}

    def __call__(self, sample: Sample) -> Any:
        length = self._generation.tokens_for(sample)
        if length is None:
            return self._shared
        if length not in self._by_length:
            self._by_length[length] = sampling_params(self._generation, self._streaming, exact_tokens=length)
        return self._by_length[length]


def sampling_params(generation: Generation, streaming: bool, exact_tokens: int | None = None) -> Any:
    from vllm import SamplingParams
    from vllm.sampling_params import RequestOutputKind

    return SamplingParams(
        temperature=generation.temperature,
        top_k=generation.top_k,
        top_p=generation.top_p,
        seed=generation.seed,
        max_tokens=exact_tokens or generation.max_tokens,
        min_tokens=exact_tokens or generation.min_tokens,
        ignore_eos=generation.ignore_eos,
        detokenize=False,
        # Streaming needs each new token as it comes; Offline only the finished answer.
        output_kind=RequestOutputKind.DELTA if streaming else RequestOutputKind.FINAL_ONLY,
    )


def token_prompt(token_ids: Sequence[int]) -> Any:
    """A prompt given as token ids, in the form the engine takes without re-parsing it."""
    try:
        from vllm.inputs import tokens_input  # vLLM 0.2x: the pre-rendered form
    except ImportError:
        from vllm.inputs import TokensPrompt

        return TokensPrompt(prompt_token_ids=list(token_ids))
    return tokens_input(list(token_ids))


ChatRenderer = Callable[[Sequence[dict[str, Any]]], list[int]]


def chat_renderer(tokenizer: Any) -> ChatRenderer:
    """A chat's prompt ids as `vllm serve` makes them: the model's chat template rendered to text, then
    tokenised without adding special tokens (the template writes them)."""

    def render(messages: Sequence[dict[str, Any]]) -> list[int]:
        text = tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False)
        return list(tokenizer.encode(text, add_special_tokens=False))

    return render


def engine_prompt(sample: Sample, render_chat: ChatRenderer | None) -> Any:
    """The sample as vLLM takes it: token ids, with the audio or images for the model's processor."""
    media = sample.media
    if media is None:
        return token_prompt(sample.prompt)
    # vLLM's TokensPrompt is a TypedDict: this dict is one.
    if isinstance(media, AudioClip):
        # Whisper: the audio goes to the encoder, the prompt ids start the decoder (as the reference's text
        # prompt "<|startoftranscript|><|en|><|transcribe|><|notimestamps|>" does).
        audio = (media.waveform, media.sampling_rate)
        return {"prompt_token_ids": list(sample.prompt), "multi_modal_data": {"audio": audio}}
    assert isinstance(media, ImageChat) and render_chat is not None
    return {"prompt_token_ids": render_chat(media.messages), "multi_modal_data": {"image": pil_images(media)}}


def load_media_processor(renderer: Any) -> None:
    """Load the model's multi-modal processor while the engine starts. vLLM loads it on first use, so
    otherwise the first sample of a timed test waits for it; with a renderer pool each load also deep-copies
    the pool's tokenizers: 94.1 s for qwen3-vl with 16 workers on a 2-CPU machine, then 0.07 s for the
    first input (bench/RESULTS.md, 2026-11-26). A vLLM without this interface is left to load it then."""
    get_mm_processor = getattr(renderer, "get_mm_processor", None)
    if get_mm_processor is not None:
        get_mm_processor().info.get_hf_processor()


def vllm_versions() -> dict[str, str]:
    import torch
    import vllm

    return {"vllm": vllm.__version__, "torch": torch.__version__, "cuda": str(torch.version.cuda)}
