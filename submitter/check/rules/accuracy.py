"""Accuracy rules, on `accuracy/` (shared/spec/checker.md §4.5, §6, §11)."""

from __future__ import annotations

from collections.abc import Iterator

from submitter.check.context import RESULT_RULES, ResultContext
from submitter.check.rules.performance import loadgen_errors, unreadable_lines
from submitter.rules import Problem, Severity

rule = RESULT_RULES.rule


def _accuracy_txt(ctx: ResultContext) -> str:
    return f"{ctx.files.accuracy_dir}/accuracy.txt"


@rule(
    "ACC-FILES", Severity.ERROR, "accuracy/ holds the detail log, accuracy.txt and mlperf_log_accuracy.json"
)
def accuracy_files(ctx: ResultContext) -> Iterator[Problem]:
    for name in ("mlperf_log_detail.txt", "accuracy.txt", "mlperf_log_accuracy.json"):
        path = f"{ctx.files.accuracy_dir}/{name}"
        if not ctx.index.has_file(path):
            yield Problem(
                path=path,
                message="is missing",
                fix="copy the accuracy run's output, and the evaluator's printout as accuracy.txt",
            )


@rule("ACC-LOG", Severity.ERROR, "every line of the accuracy detail log is a :::MLLOG record")
def accuracy_log_readable(ctx: ResultContext) -> Iterator[Problem]:
    yield from unreadable_lines(ctx.files.accuracy_log)


@rule("ACC-LOADGEN-ERROR", Severity.ERROR, "LoadGen logged no error during the accuracy run")
def accuracy_loadgen_errors(ctx: ResultContext) -> Iterator[Problem]:
    log = ctx.files.accuracy_log
    yield from loadgen_errors(log, log.path if log else ctx.path)


@rule("ACC-TARGET", Severity.ERROR, "every accuracy metric is found and meets its target (closed division)")
def targets_met(ctx: ResultContext) -> Iterator[Problem]:
    accuracy, bench = ctx.files.accuracy, ctx.bench
    if accuracy is None or bench is None or not ctx.closed:
        return
    for bound in bench.accuracy.targets:
        value = accuracy.values.get(bound.metric)
        if value is None or value.number is None:
            hint = ""
            if accuracy.numpy_scalar_line is not None:
                hint = f" (line {accuracy.numpy_scalar_line} prints a numpy scalar such as np.int64(...))"
            yield Problem(
                path=accuracy.path,
                field=bound.metric,
                line=accuracy.numpy_scalar_line,
                message=f"is not found in accuracy.txt{hint}",
                fix="print plain numbers, as the reference evaluation.py does under numpy < 2",
            )
        elif value.number < bound.threshold:
            yield Problem(
                path=accuracy.path,
                field=bound.metric,
                line=value.line,
                message=f"is {value.raw}, the target is >= {bound.threshold:.6f} "
                f"({bound.reference} x {bound.factor})",
                fix="fix the model or its quantisation until it reaches the target; rerun accuracy",
            )


@rule("ACC-UPPER-LIMIT", Severity.ERROR, "metrics with an upper limit stay under it (closed division)")
def upper_limits(ctx: ResultContext) -> Iterator[Problem]:
    accuracy, bench = ctx.files.accuracy, ctx.bench
    if accuracy is None or bench is None or not ctx.closed:
        return
    for bound in bench.accuracy.upper_limits:
        value = accuracy.values.get(bound.metric)
        if value is not None and value.number is not None and value.number > bound.threshold:
            yield Problem(
                path=accuracy.path,
                field=bound.metric,
                line=value.line,
                message=f"is {value.raw}, the upper limit is {bound.threshold:.6f}",
                fix="outputs run too long: check the EOS token and max_tokens",
            )


@rule("ACC-HASH", Severity.ERROR, "accuracy.txt ends with the hash line truncation writes")
def hash_present(ctx: ResultContext) -> Iterator[Problem]:
    accuracy = ctx.files.accuracy
    if accuracy is not None and accuracy.hash is None:
        yield Problem(
            path=accuracy.path,
            message="has no hash=<sha256> line",
            fix="run MLCommons' truncate_accuracy_log.py (or submitter's staging) on the tree",
        )


@rule("ACC-TRUNCATED", Severity.ERROR, "mlperf_log_accuracy.json is truncated")
def log_truncated(ctx: ResultContext) -> Iterator[Problem]:
    path = f"{ctx.files.accuracy_dir}/mlperf_log_accuracy.json"
    size = ctx.index.files.get(path)
    limit = ctx.rules.limits.max_accuracy_log_bytes
    if size is not None and size > limit:
        yield Problem(
            path=path,
            message=f"is {size} bytes, the limit is {limit} (not truncated)",
            fix="run truncate_accuracy_log.py, which keeps its sha256 in accuracy.txt",
        )


@rule("ACC-DATASET", Severity.ERROR, "the accuracy run covered the whole data set")
def whole_dataset(ctx: ResultContext) -> Iterator[Problem]:
    log, bench = ctx.files.accuracy_log, ctx.bench
    if log is None or bench is None:
        return
    key = (
        "effective_accuracy_sample_count"
        if "effective_accuracy_sample_count" in log
        else "qsl_reported_total_count"
    )
    found, needed = log.get(key), bench.dataset.accuracy_sample_count
    if found != needed:
        yield Problem(
            path=log.path,
            field=key,
            line=log.line_of(key),
            message=f"is {found}, the accuracy run must cover all {needed} samples",
            fix="run accuracy mode on the complete data set",
        )
