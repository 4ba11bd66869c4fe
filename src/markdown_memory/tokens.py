"""Token counts: one documented estimate used everywhere (budgets, outlines, reports).

We do not run a real tokenizer for counts: the agent's tokenizer is unknown (Claude, GPT and
Gemini all differ) and counting must be cheap at index time. The estimate is:

* each CJK ideograph, kana or hangul syllable counts as 1 token (BPE tokenizers spend about one
  token per such character);
* every other run of characters counts ``ceil(chars / 4)`` tokens, the rule of thumb OpenAI
  publishes for English text ("one token ~= 4 characters", help.openai.com, "What are tokens").

It tends to over-count code slightly, which is the safe side for a budget.
"""

from __future__ import annotations

import re

_WIDE = re.compile(r"[\u1100-\u11ff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


def count_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (see module docstring). Returns >= 0; ``""`` -> 0."""
    if not text:
        return 0
    wide = len(_WIDE.findall(text))
    rest = len(text) - wide
    return wide + (rest + 3) // 4
