"""The repository rules MLCommons enforces on an upload, taken from the checker rather than written twice.

`submitter check` registers them in `submitter.check.rules.hygiene` (names with dots or spaces,
symlinks, files over the round's limit, `__pycache__`, empty folders, stray files); here the same
functions run on the same index of the tree, without the rest of the checker.
"""

from __future__ import annotations

from dataclasses import dataclass

from submitter.check.context import TREE_RULES, TreeContext
from submitter.check.detect import Detection, detect_tree_round
from submitter.check.load import FileIndex, TreeReader
from submitter.check.rules import hygiene
from submitter.check.tree import Scope, discover
from submitter.rounds.models import RoundRules
from submitter.rounds.registry import load_round
from submitter.rules import Finding, RuleSet, Severity

# `check` warns about these (they are form, not a run's fault); an upload takes none of them: errors here.
REPOSITORY_RULES: RuleSet[TreeContext] = RuleSet("repository rules")
for _rule in TREE_RULES:
    if _rule.check.__module__ == hygiene.__name__:
        REPOSITORY_RULES.rule(_rule.id, Severity.ERROR, _rule.summary)(_rule.check)


@dataclass(frozen=True)
class TreeRound:
    rules: RoundRules
    detection: Detection | None  # None when the user named the round


def tree_round(scope: Scope, index: FileIndex, round_name: str | None) -> TreeRound:
    """The round the tree is for (its file-size limit and allowed root files), found as `check` finds it."""
    if round_name is not None:
        return TreeRound(load_round(round_name), None)
    detection = detect_tree_round(TreeReader(scope.root, index), discover(scope))
    return TreeRound(load_round(detection.round), detection)


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
