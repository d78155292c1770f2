"""The orderings of the exploration benchmark's arms in words, for README and the page: each
says which policy it scores, and holds over every run counted, or says that none holds."""

from __future__ import annotations

from benchmarks.pages.exploration_runs import (
    ARM_NAMES,
    MEASURES,
    ORDER_SEEDS,
    criterion,
    improvements,
    seeds,
)

# Per measure, the word between the better arm and the other.
VERBS = {"success": "over", "solved": "before"}


def ordering_words(runs: list[dict], task: str) -> str:
    """The orderings of `task`'s arms that hold over every run counted (the 95% interval of
    P(X > Y) above 0.5), per measure and naming the policy it scores; each arm against the
    control that no ordering holds for, with P and its interval. Where the task ran one arm,
    or an arm has fewer than `ORDER_SEEDS` seeds, that instead."""
    mine = [r for r in runs if r["task"] == task]
    arms = dict.fromkeys(r["arm"] for r in mine)
    if len(arms) < 2:
        return "one arm: nothing to order"
    if min(seeds([r for r in mine if r["arm"] == arm]) for arm in arms) < ORDER_SEEDS:
        return f"fewer than {ORDER_SEEDS} seeds an arm: not ordered"
    said = []
    for measure, words in MEASURES.items():
        held = f" ({criterion(mine)})" if measure == "solved" else ""
        said.append(f"{words}{held}: {_measured(mine, task, measure)}")
    return "by the 95% interval of P(X > Y) over every run counted, " + "; ".join(said)


def _measured(runs: list[dict], task: str, measure: str) -> str:
    """The ordered pairs of one measure, then each arm the control is not ordered against."""
    found = improvements(runs, task, measure)
    verb = VERBS[measure]
    ordered = {(better, other) for better, other, _, (low, _) in found if low > 0.5}
    pairs = [
        f"{ARM_NAMES[better]} {verb} {ARM_NAMES[other]}, P = {p:.2f} [{low:.2f}, {high:.2f}]"
        for better, other, p, (low, high) in found
        if (better, other) in ordered
    ]
    for arm, other, p, (low, high) in found:
        if other == "control" and not {(arm, other), (other, arm)} & ordered:
            pairs.append(
                f"no ordering of {ARM_NAMES[arm]} and control holds, "
                f"P({ARM_NAMES[arm]} {verb} control) = {p:.2f} [{low:.2f}, {high:.2f}]"
            )
    return ", ".join(pairs) if pairs else "no arm ordered"
