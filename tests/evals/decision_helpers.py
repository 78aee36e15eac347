"""Decision kinds shared by the decision-point tests."""

KINDS_YAML = """\
decision_kinds:
  - id: turn-taking
    question: Is the candidate done talking?
    answers: [take the turn, wait]
    derive: turn_gap
  - id: handoff
    question: Hand off to a human, or keep helping?
    answers: [hand off, keep helping]
"""
