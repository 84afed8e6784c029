"""submitter: run MLPerf Inference LLM benchmarks, assemble and check the submission, write its documents."""

__version__ = "0.1.0"
