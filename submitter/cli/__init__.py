"""The `submitter` command line: a thin layer that parses options and calls the stages."""

from __future__ import annotations

import os
import sys

import click

from submitter import __version__
from submitter.cli.accuracy import accuracy
from submitter.cli.check import check
from submitter.cli.data import data
from submitter.cli.package import package
from submitter.cli.report import report
from submitter.cli.rounds import rounds
from submitter.cli.rules import list_rules
from submitter.cli.run import run
from submitter.cli.run_all import run_all
from submitter.cli.stage import stage_command
from submitter.cli.systems import systems
from submitter.cli.tune import tune
from submitter.errors import SubmitterError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="submitter")
def cli() -> None:
    """From GPU runs to an accepted MLPerf Inference submission."""


cli.add_command(accuracy)
cli.add_command(check)
cli.add_command(data)
cli.add_command(list_rules)
cli.add_command(package)
cli.add_command(report)
cli.add_command(rounds)
cli.add_command(run)
cli.add_command(run_all)
cli.add_command(stage_command)
cli.add_command(systems)
cli.add_command(tune)


def main() -> None:
    """Entry point: a user's error becomes one paragraph on stderr and an exit code, never a traceback."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except SubmitterError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:
        if os.environ.get("SUBMITTER_DEBUG"):
            raise
        click.echo(
            f"internal error: {type(exc).__name__}: {exc}. This is a bug in submitter; "
            "rerun with SUBMITTER_DEBUG=1 for the traceback and report it.",
            err=True,
        )
        sys.exit(1)
