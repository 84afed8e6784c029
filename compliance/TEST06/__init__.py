"""TEST06: the audit config (audit.config) and the verification of an audit run's accuracy log (verify)."""
