"""The `submitter` command line: a thin layer that parses options and calls the stages."""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import NoReturn

import click

from submitter import __version__
from submitter.errors import SubmitterError, UsageProblem
from submitter.fileio import os_error_reason
from submitter.interrupts import EXIT_INTERRUPTED, install_terminate_as_interrupt

EXIT_USAGE = UsageProblem.exit_code

# Each command's module is imported only when that command runs: `submitter check` then pays for the
# checker, not for the harness, numpy or vLLM's clients. The summary is what `--help` lists without
# importing anything (a test holds each the beginning of the command's own help).
COMMANDS: dict[str, tuple[str, str]] = {
    "accuracy": (
        "submitter.cli.accuracy:accuracy",
        "Score RUN_DIR's accuracy log like the reference evaluator; writes accuracy.txt and accuracy.json.",
    ),
    "check": ("submitter.cli.check:check", "Check the submission tree at PATH"),
    "data": (
        "submitter.cli.data:data",
        "Synthetic datasets and dummy-weight models for runs without the real ones.",
    ),
    "package": ("submitter.cli.package:package", "Check and scan the submission tree at PATH"),
    "report": ("submitter.cli.report:report", "Write the review of the submission tree at PATH"),
    "rounds": ("submitter.cli.rounds:rounds", "Show the rules of the MLPerf rounds submitter knows."),
    "rules": (
        "submitter.cli.rules:list_rules",
        "The rules of `systems validate`, `check` and `package`, with their stable ids.",
    ),
    "run": ("submitter.cli.run:run", "Run LoadGen against the system's engine"),
    "run-all": (
        "submitter.cli.run_all:run_all",
        "Run every (benchmark, scenario, mode) the system's round requires",
    ),
    "stage": (
        "submitter.cli.stage:stage_command",
        "Copy the best valid run of every required (system, benchmark, scenario, mode) into a fresh tree",
    ),
    "systems": ("submitter.cli.systems:systems", "Describe benchmark systems once."),
    "tune-engine": (
        "submitter.cli.tune_engine:tune_engine_command",
        "Search the engine arguments that give a scenario the most, with short runs",
    ),
    "tune-qps": ("submitter.cli.tune:tune", "Search the highest target_qps LoadGen judges VALID"),
}


class LazyGroup(click.Group):
    """A group that imports a command's module only when the command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, name = COMMANDS[cmd_name][0].partition(":")
        command: click.Command = getattr(importlib.import_module(module), name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, summary) for name, (_, summary) in sorted(COMMANDS.items())]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="submitter")
def cli() -> None:
    """From GPU runs to an accepted MLPerf Inference submission."""


def main() -> None:
    """Entry point: a user's error becomes one paragraph on stderr and an exit code, never a traceback.

    The exit codes, the same for every command: 0 ok; 1 findings, or a run or check that failed;
    2 a usage or input error (an unknown round, system, benchmark or file, a malformed input file, a
    destination that cannot be written); 130 interrupted by Ctrl-C or SIGTERM, after clean-up."""
    install_terminate_as_interrupt()  # before any work, so every command cleans up on SIGTERM
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_USAGE)  # click's own errors are all about the command line or the files it names
    except (click.Abort, KeyboardInterrupt):
        # click turns Ctrl-C (and SIGTERM, raised as Ctrl-C) into Abort once every `finally` has run.
        click.echo("interrupted (Ctrl-C or SIGTERM); run the command again to finish its work", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except SubmitterError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except OSError as exc:
        if not _file_system_failure(exc):
            _internal_error(exc)
        if os.environ.get("SUBMITTER_DEBUG"):
            raise
        # A file-system failure no command foresaw (a disk filling up mid-way): named, not a traceback.
        where = f"{exc.filename}: " if exc.filename else "a file could not be written: "
        click.echo(
            f"error: {where}{os_error_reason(exc)}; check that the path exists, that you may read or "
            "write it as the command needs, and that its device has space, then run the command again",
            err=True,
        )
        sys.exit(EXIT_USAGE)
    except Exception as exc:
        _internal_error(exc)


def _internal_error(exc: Exception) -> NoReturn:
    """A bug: one paragraph asking for a report, or the traceback with SUBMITTER_DEBUG set."""
    if os.environ.get("SUBMITTER_DEBUG"):
        raise exc
    click.echo(
        f"internal error: {type(exc).__name__}: {exc}. This is a bug in submitter; "
        "rerun with SUBMITTER_DEBUG=1 for the traceback and report it.",
        err=True,
    )
    sys.exit(1)


# Failures of the file system itself: a full disk, a read-only mount, a refused permission.
_FILE_SYSTEM_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})


def _file_system_failure(exc: OSError) -> bool:
    """An OSError about a named file, or one of the file system's own refusals; not a bug to report."""
    return exc.filename is not None or exc.errno in _FILE_SYSTEM_ERRNOS
