"""Compliance audits: the official audit configs (one folder per test, e.g. TEST06/audit.config)
and the verifiers that judge an audit run."""
