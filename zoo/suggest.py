"""'Did you mean' suggestions for misspelt keys and component names.

A word that differs from a choice only by non-ASCII look-alike letters (a Cyrillic 'а' for the
Latin 'a', a Greek 'ο' for 'o', a full-width 'ｈ', an invisible zero-width space, ...) is matched
to that choice, and the suggestion names the offending character, since the two look the same
in an editor.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable

#: non-ASCII letters that look like an ASCII letter (the common Cyrillic and Greek ones; NFKC
#: normalisation covers full-width and other compatibility forms)
CONFUSABLES: dict[str, str] = {
    # Cyrillic small
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h",
    "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l", "ь": "b", "п": "n", "г": "r",
    # Cyrillic capital
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "Ѕ": "S", "І": "I", "Ї": "I", "Ј": "J", "Һ": "H",
    "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "I",
    # Greek small
    "α": "a", "β": "b", "γ": "y", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p",
    "τ": "t", "υ": "u", "χ": "x", "ω": "w", "ς": "s",
    # Greek capital
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # other look-alikes of ASCII punctuation common in keys
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-",
}


def ascii_lookalike(word: str) -> str:
    """``word`` with look-alike letters replaced by their ASCII twins and invisible (format)
    characters removed; other characters are kept."""
    out = []
    for ch in word:
        if ch.isascii():
            out.append(ch)
        elif ch in CONFUSABLES:
            out.append(CONFUSABLES[ch])
        elif unicodedata.category(ch) == "Cf":  # zero-width space, joiners, BOM
            continue
        else:
            folded = unicodedata.normalize("NFKC", ch)
            out.append(CONFUSABLES.get(folded, folded))
    return "".join(out)


def describe_char(ch: str) -> str:
    """``'а' (U+0430 CYRILLIC SMALL LETTER A)``."""
    name = unicodedata.name(ch, "unnamed character")
    shown = ch if unicodedata.category(ch) != "Cf" else ""
    return f"'{shown}' (U+{ord(ch):04X} {name})" if shown else f"U+{ord(ch):04X} {name}"


def non_ascii_note(word: str) -> str:
    """``'hіdden' contains the non-ASCII character 'і' (U+0456 ...)``, or '' for ASCII words."""
    chars = list(dict.fromkeys(ch for ch in str(word) if not ch.isascii()))
    if not chars:
        return ""
    what = "character" if len(chars) == 1 else "characters"
    return f"'{word}' contains the non-ASCII {what} {', '.join(map(describe_char, chars))}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """Return `` (did you mean 'x'?)`` for the closest choice, or an empty string.

    A word with non-ASCII characters is first compared with its ASCII look-alike, and the
    suggestion says which characters are not ASCII:
    `` (did you mean 'hidden'? 'hіdden' contains the non-ASCII character 'і' (U+0456 ...))``.
    """
    choices = [str(c) for c in choices]
    word = str(word)
    note = non_ascii_note(word)
    if note:
        plain = ascii_lookalike(word)
        match = [c for c in choices if c == plain] or [c for c in choices
                                                       if c.lower() == plain.lower()]
        close = match[:1] or difflib.get_close_matches(plain, choices, n=1, cutoff=0.6)
        if close:
            return f" (did you mean '{close[0]}'? {note})"
        return f" ({note})"
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
