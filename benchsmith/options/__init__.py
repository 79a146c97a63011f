"""Option generation and blind rules: libraries the families and the curation stages share.

Distractors drawn from the gold's own distribution (``distractors``, ``text_distractors``), the
question prompt (``question_prompt``) and the cheap rules that answer an item without its skill
(``blind_rules``, ``blind_numeric_rules``), which the shortcut checks and the blind-baseline
stage run.
"""
