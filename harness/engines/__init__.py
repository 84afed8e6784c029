"""Engines behind one protocol (`base.Engine`); each backend in its own module, imported only when chosen,
described by one record in `submitter.systems.backends.BACKENDS` (GPU, start-up time, replicas,
argument model) and created through `registry.create_engine`.

| backend      | module         | runs                                                        |
|--------------|----------------|-------------------------------------------------------------|
| `vllm`       | `vllm_offline` | vLLM's in-process `LLM`, samples handed over as they come     |
| `vllm-async` | `vllm_async`   | vLLM's in-process `AsyncLLM`, streaming first tokens          |
| `openai`     | `openai`       | `/v1/completions` on one or many OpenAI-compatible servers    |
| `synthetic`  | `synthetic`    | a deterministic timing model on the CPU                       |

`event_loop.SampleLoop` is the asyncio thread the two streaming engines (`vllm-async`, `openai`) share.
`replicas > 1` runs that many copies of the `vllm` or `synthetic` engine, one process each (`replicas`
module); `vllm-async` uses vLLM's own data parallelism instead.
"""
