"""The checker's rules, one module per area; importing this package registers them all."""

from submitter.check.rules import (  # noqa: F401  (imported to register their rules)
    accuracy,
    compliance,
    hygiene,
    measurements,
    performance,
    power,
    structure,
    system,
)
