"""The repository rules MLCommons enforces on an upload, taken from the checker rather than written twice.

`submitter check` registers them in `submitter.check.rules.hygiene` (names with dots or spaces,
symlinks, files over the round's limit, `__pycache__`, empty folders, stray files, submitter's own work
files); here the same functions run as errors on the index the checker built.
"""

from __future__ import annotations

from submitter.check.context import TREE_RULES, TreeContext
from submitter.check.load import FileIndex
from submitter.check.rules import hygiene
from submitter.check.tree import Scope
from submitter.rounds.models import RoundRules
from submitter.rule_registry import Finding, RuleSet, Severity

# `check` warns about these (they are form, not a run's fault); an upload takes none of them: errors here.
REPOSITORY_RULES: RuleSet[TreeContext] = RuleSet("repository rules")
for _rule in TREE_RULES:
    if _rule.check.__module__ == hygiene.__name__:
        REPOSITORY_RULES.rule(_rule.id, Severity.ERROR, _rule.summary)(_rule.check)
REPOSITORY_RULE_IDS: frozenset[str] = frozenset(rule.id for rule in REPOSITORY_RULES)


def repository_findings(scope: Scope, index: FileIndex, rules: RoundRules) -> list[Finding]:
    tree = TreeContext(
        scope=scope,
        rules=rules,
        detection=None,
        index=index,
        entries=(),
        systems={},
        unreadable={},
        model_mappings={},
        nameplates={},
    )
    return REPOSITORY_RULES.run(tree)
