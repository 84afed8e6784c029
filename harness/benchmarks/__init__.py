"""Benchmarks as plug-ins: one package per benchmark family, found through `registry.benchmark_plugin`.

A round pack names each runnable benchmark's plug-in (`plugin = "llama3_1_8b"` in its benchmark table);
the plug-in holds the dataset loader, how a sample becomes a request (token ids), the synthetic stand-in
data with the real length profile, and the accuracy evaluator. Adding a benchmark is a package here and
its round-pack data; see `registry.BenchmarkPlugin` for what a package must define.
"""
