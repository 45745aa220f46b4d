"""badge.svg: the level a protocol run reached and its MUST/SHOULD counts, for a README or a page."""

from __future__ import annotations

from html import escape

from ..verdicts.requirements import Level
from ..verdicts.results import RunResult, Status

COLOURS = {"MAY": "#1a7f37", "SHOULD": "#2da44e", "MUST": "#9a6700", "none": "#cf222e", "error": "#8250df"}


def level_reached(run: RunResult) -> str:
    """The strictest-first prefix of levels whose requirements all passed: MUST, then SHOULD,
    then MAY (a level with no requirement in the run does not count as reached). Only what the
    document fixes counts: practice requirements give advice, not a level."""
    if run.fatal is not None:
        return "error"
    reached = "none"
    for level in Level:
        mine = [r for r in run.document if r.requirement.level is level]
        if not mine or any(r.status is not Status.PASSED for r in mine):
            break
        reached = level.value.upper()
    return reached


def render_badge(run: RunResult) -> str:
    tally = run.tally()
    reached = level_reached(run)

    def counts(level: str) -> str:
        c = tally[level]
        return f"{c['passed']}/{sum(c.values())}"

    named = run.product if run.product != run.target else ""
    scored = run.requirement_set or run.protocol  # a frozen set names the bar: agent-protocol/2026.12
    label_text = f"{named} \u00b7 {scored}" if named else scored
    label = escape(label_text)
    # the colour says the level reached; the words say the counts behind it
    summary = f"MUST {counts('must')} \u00b7 SHOULD {counts('should')}"
    value = "target error" if reached == "error" else summary
    # widths from character counts: monospace-ish estimate, so the text never spills
    left, right = 10 + 7 * len(label_text), 10 + 7 * len(value)
    width = left + right
    colour = COLOURS.get(reached, COLOURS["none"])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{label}: {escape(value)}"><title>{label}: {escape(value)} (level reached: {reached})</title>'
        f'<rect width="{left}" height="20" fill="#555"/><rect x="{left}" width="{right}" height="20" fill="{colour}"/>'
        f'<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="{left / 2}" y="14" text-anchor="middle">{label}</text>'
        f'<text x="{left + right / 2}" y="14" text-anchor="middle">{escape(value)}</text></g></svg>\n'
    )
