"""Errors a user can act on. The CLI prints them as one paragraph and exits non-zero, never a traceback."""


class SubmitterError(Exception):
    """Something went wrong with the user's input or environment; the message says what and how to fix."""

    exit_code = 1


class UsageProblem(SubmitterError):
    """The command line names something that does not exist (a round, a system, a file)."""

    exit_code = 2
