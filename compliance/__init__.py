"""Compliance audits as plug-ins: one folder per test (`TEST06/`: the official audit.config and its
verifier), found through `registry`."""
