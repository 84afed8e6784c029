"""Accuracy rules, on `accuracy/` (shared/spec/checker.md §4.5, §6, §11), or an endpoints result's scores."""

from __future__ import annotations

from collections.abc import Iterator

from submitter.check.accuracy_judgement import (
    ASKED_SAMPLES,
    HELD_SAMPLES,
    AccuracyJudgement,
    samples_covered,
)
from submitter.check.context import RESULT_RULES, ResultContext
from submitter.check.rules.performance import loadgen_errors, stray_log_lines, unreadable_lines
from submitter.rule_registry import Problem, Severity

rule = RESULT_RULES.rule


def _judgement(ctx: ResultContext) -> AccuracyJudgement | None:
    return ctx.accuracy_judgement


@rule(
    "ACC-FILES", Severity.ERROR, "accuracy/ holds the detail log, accuracy.txt and mlperf_log_accuracy.json"
)
def accuracy_files(ctx: ResultContext) -> Iterator[Problem]:
    if ctx.endpoints:
        return
    names = ["accuracy.txt", "mlperf_log_accuracy.json"]
    if ctx.files.accuracy_log is None:
        names.insert(0, "mlperf_log_detail.txt")
    for name in names:
        path = f"{ctx.files.accuracy_dir}/{name}"
        if not ctx.index.has_file(path):
            yield Problem(
                path=path,
                message="is missing",
                fix="copy the accuracy run's output, and the evaluator's printout as accuracy.txt",
            )


@rule("ACC-LOG", Severity.ERROR, "LoadGen's records in the accuracy detail log can be read")
def accuracy_log_readable(ctx: ResultContext) -> Iterator[Problem]:
    yield from unreadable_lines(ctx.files.accuracy_log)


@rule("ACC-LOG-LINES", Severity.WARNING, "every line of the accuracy detail log is a LoadGen record")
def accuracy_log_lines(ctx: ResultContext) -> Iterator[Problem]:
    yield from stray_log_lines(ctx.files.accuracy_log)


@rule("ACC-LOADGEN-ERROR", Severity.ERROR, "LoadGen logged no error during the accuracy run")
def accuracy_loadgen_errors(ctx: ResultContext) -> Iterator[Problem]:
    log = ctx.files.accuracy_log
    yield from loadgen_errors(log, log.path if log else ctx.path)


@rule("ACC-VALUE", Severity.ERROR, "every accuracy value accuracy.txt prints is a number")
def values_are_numbers(ctx: ResultContext) -> Iterator[Problem]:
    judgement = _judgement(ctx)
    for value in judgement.not_numbers if judgement else ():
        yield Problem(
            path=ctx.files.accuracy.path if ctx.files.accuracy else ctx.path,
            line=value.line,
            message=f"prints {value.raw!r} where a number belongs",
            fix="print the evaluator's numbers unchanged",
        )


@rule("ACC-TARGET", Severity.ERROR, "every accuracy metric is found and meets its target (closed division)")
def targets_met(ctx: ResultContext) -> Iterator[Problem]:
    judgement, accuracy = _judgement(ctx), ctx.files.accuracy
    if judgement is None or accuracy is None or not ctx.closed:
        return
    for miss in judgement.misses:
        if not miss.upper:
            bound = miss.bound
            yield Problem(
                path=accuracy.path,
                field=bound.metric,
                line=miss.line,
                message=f"is {miss.value}, the target is >= {bound.threshold:.6f} "
                f"({bound.reference} x {bound.factor})",
                fix="fix the model or its quantisation until it reaches the target; rerun accuracy",
            )
    missed = {miss.bound.metric for miss in judgement.misses}
    for bound in judgement.unseen:
        if bound.metric in missed:
            continue
        hint = ""
        if accuracy.numpy_scalar_line is not None:
            hint = f" (line {accuracy.numpy_scalar_line} prints a numpy scalar such as np.int64(...))"
        yield Problem(
            path=accuracy.path,
            field=bound.metric,
            line=accuracy.numpy_scalar_line,
            message=f"is not found in accuracy.txt{hint}",
            fix="print plain numbers, as the reference evaluator does under numpy < 2",
        )


@rule("ACC-UPPER-LIMIT", Severity.ERROR, "metrics with an upper limit stay under it (closed division)")
def upper_limits(ctx: ResultContext) -> Iterator[Problem]:
    judgement, accuracy = _judgement(ctx), ctx.files.accuracy
    if judgement is None or accuracy is None or not ctx.closed:
        return
    for miss in judgement.misses:
        if miss.upper:
            yield Problem(
                path=accuracy.path,
                field=miss.bound.metric,
                line=miss.line,
                message=f"is {miss.value}, the upper limit is {miss.bound.threshold:.6f}",
                fix="outputs run too long: check the EOS token and max_tokens",
            )


@rule("ACC-HASH", Severity.ERROR, "accuracy.txt holds the hash line truncation writes (closed division)")
def hash_present(ctx: ResultContext) -> Iterator[Problem]:
    judgement, accuracy = _judgement(ctx), ctx.files.accuracy
    if judgement is not None and accuracy is not None and ctx.closed and judgement.hash is None:
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
    if size is not None and size > limit and not ctx.endpoints:
        yield Problem(
            path=path,
            message=f"is {size} bytes, the limit is {limit} (not truncated)",
            fix="run truncate_accuracy_log.py, which keeps its sha256 in accuracy.txt",
        )


@rule("ACC-DATASET", Severity.ERROR, "the accuracy run covered the whole data set")
def whole_dataset(ctx: ResultContext) -> Iterator[Problem]:
    log, bench = ctx.files.accuracy_log, ctx.bench
    if log is None or log.problems or bench is None:
        return  # a log with lines that cannot be read: ACC-LOG names them
    dataset, folder = bench.dataset, ctx.files.entry.scenario
    by_scenario = dataset.accuracy_sample_count_by_scenario
    needed = (
        by_scenario.get(folder, by_scenario.get(folder.lower()))
        if by_scenario
        else dataset.accuracy_sample_count
    )
    if needed is None:
        yield Problem(
            path=log.path,
            message=f"{bench.name} has accuracy sample counts per scenario ({by_scenario}) and the official "
            f"checker looks the folder name {folder!r} up as written",
            fix=f"name the folder {', '.join(by_scenario)}",
        )
        return
    key = ASKED_SAMPLES if ASKED_SAMPLES in log else HELD_SAMPLES
    found, covered = log.get(key), samples_covered(log)
    if covered is not None and covered != found:  # LoadGen asked for more than its QSL held
        yield Problem(
            path=log.path,
            field=key,
            line=log.line_of(key),
            message=f"is {found}, but the QSL held {log.get(HELD_SAMPLES)} samples ({HELD_SAMPLES}), so "
            f"the accuracy log covers {covered}; the accuracy run must cover all {needed}",
            fix="run accuracy mode on the complete data set",
        )
    elif found != needed:
        yield Problem(
            path=log.path,
            field=key,
            line=log.line_of(key),
            message=f"is {found}, the accuracy run must cover all {needed} samples",
            fix="run accuracy mode on the complete data set",
        )


@rule("ACC-EXTRA-FILES", Severity.ERROR, "the accuracy folder holds the generated samples the round names")
def extra_files(ctx: ResultContext) -> Iterator[Problem]:
    bench = ctx.bench
    if bench is None or not bench.extra_accuracy_files:
        return
    for folder, stems in bench.extra_accuracy_files.items():
        path = f"{ctx.files.accuracy_dir}/{folder}"
        present = {name.split(".")[0] for name in ctx.index.files_in(path)}
        missing = [stem for stem in stems if stem not in present]
        if not ctx.index.has_dir(path) or missing:
            yield Problem(
                path=path,
                message=f"lacks {', '.join(missing)}" if ctx.index.has_dir(path) else "is missing",
                fix=f"copy the generated {folder} {', '.join(stems)} of the accuracy run into {path}/",
            )


@rule("ACC-SCORE", Severity.ERROR, "an endpoints result reports its accuracy score, at the target (closed)")
def endpoints_score(ctx: ResultContext) -> Iterator[Problem]:
    bench, result = ctx.bench, ctx.files.endpoints
    if result is None or bench is None:
        return
    path = f"{ctx.path}/accuracy/accuracy_results.json"
    if not result.accuracy_scores:
        yield Problem(path=path, message="reports no accuracy score", fix="submit the endpoints accuracy run")
        return
    if not ctx.closed or not bench.endpoints_scored:
        return
    targets = bench.accuracy.targets_for(ctx.scenario)
    score = numeric_score(result.accuracy_scores[0], [bound.metric for bound in targets])
    if score is None:
        yield Problem(
            path=path, message=f"score {result.accuracy_scores[0]!r} is not a number", fix="report F1"
        )
    elif targets and score < targets[0].threshold:
        yield Problem(
            path=path,
            message=f"score {score} is below the target {targets[0].threshold:.6f}",
            fix="fix the model until it reaches the target",
        )


def _as_float(number: int | float) -> float | None:
    """None for an integer past the range of a double (JSON holds any integer; no evaluator prints one)."""
    try:
        return float(number)
    except OverflowError:
        return None


def numeric_score(score: object, metrics: list[str]) -> float | None:
    """A comparable number from an endpoints score: the number itself, or the first known key of a dict."""
    if isinstance(score, bool):
        return float(score)
    if isinstance(score, int | float):
        return _as_float(score)
    if isinstance(score, str):
        try:
            return float(score)
        except ValueError:
            return None
    if isinstance(score, dict):
        keys = [
            name for metric in metrics for name in (metric, metric.lower(), metric.split("_")[-1].lower())
        ]
        for key in [*keys, "f1", "score", "accuracy"]:
            value = numeric_score(score.get(key), []) if not isinstance(score.get(key), dict) else None
            if value is not None:
                return value
    return None
