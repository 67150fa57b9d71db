"""The English words that make a sentence speak about speed (the review list's cues).

A cue is a word about speed or time (faster, slower, quick, speed, speed-up, run
time, performance, overhead, efficient, seconds, ms ...), a comparison of amounts
(similar, comparable, the same time, 3 times, 13x, twice as, orders of
magnitude) or a modifier before better / worse / an improvement (much,
significantly, barely ...).  A miss costs more than a false alarm, so the cues
are generous; "memory efficient" is not one.

The sentence is read as words once (one simple pattern) and the words are looked
up in sets: a lecture page's sentences cost a fraction of a millisecond, where one
pattern of all cues took several.
"""

from __future__ import annotations

import functools
import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: words that are cues on their own (lower case)
WORDS = _words("""
    fast faster fastest slow slower slowest slowly slows slowed slowing slowdown slowdowns
    slow-down slow-downs quick quicker quickest quickly speed speeds speeded speedier
    speediest speedily speedup speedups speed-up speed-ups accelerate accelerates
    accelerated accelerating acceleration decelerate decelerates decelerated decelerating
    deceleration runtime runtimes run-time run-times timing timings timed elapsed latency
    throughput overhead overheads performance performant outperform outperforms
    outperformed outperforming efficient efficiently efficiency inefficient inefficiently
    inefficiency seconds milliseconds microseconds nanoseconds minute minutes hour hours
    similar similarly comparable gain gains wall-time wall-clock
""")
#: efficiency cues that another word before them turns into something else
NOT_AFTER = {"efficient": "memory", "efficiently": "memory", "efficiency": "memory"}
#: the first word of a cue of two or three words -> the words that may follow it
PHRASES = {
    "run": (("time",), ("times",)), "running": (("time",), ("times",)),
    "execution": (("time",), ("times",)), "wall": (("time",), ("clock", "time")),
    "compile": (("time",), ("times",)), "compilation": (("time",), ("times",)),
    "twice": (("as",),), "half": (("the",), ("as",)),
    "order": (("of", "magnitude"),), "orders": (("of", "magnitude"),),
    "same": (("time",), ("times",), ("speed",), ("performance",)),
    "about": (("the", "same"),), "on": (("par",),),
    "as": (("fast", "as"), ("slow", "as"), ("quick", "as")),
    "benefit": (("from",),), "benefits": (("from",),),
}
#: amounts before "times": "3 times", "several times"
COUNTS = _words("two three four five six seven eight nine ten twelve fifteen twenty "
                "thirty fifty hundred hundreds thousand thousands several")
#: units after a number: "0.46 ms", "12ms", "13x"
UNITS = _words("ms µs μs us ns s sec secs min x × second seconds millisecond milliseconds "
               "microsecond microseconds nanosecond nanoseconds")
#: a modifier, then (up to two words later) a comparison: "barely better", "much worse"
MODIFIERS = _words("much significantly substantially considerably dramatically noticeably "
                   "barely slightly marginally far way little bit")
COMPARISONS = ("better", "worse", "improv", "difference", "advantage")


@functools.cache
def _word_pattern() -> re.Pattern[str]:
    """A word: letters and digits, inner hyphens and points (``speed-up``, ``2.4``), or
    ``×``; compiled at the first sentence."""
    return re.compile(r"[^\W_]+(?:[-.][^\W_]+)*|×")


_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")
_DIGIT = re.compile(r"[0-9]")


def _number_with_unit(word: str) -> bool:
    """``12ms``, ``13x``, ``2.4×``: a number with its unit in one word."""
    number = _NUMBER.match(word)
    return number is not None and number.end() < len(word) and word[number.end():] in UNITS


def may_have_cues(text: str) -> bool:
    """False when ``text`` surely has no cue (most sentences): told from the set of its
    words, without looking at each word in Python."""
    if _DIGIT.search(text):
        return True
    words = set(_word_pattern().findall(text.lower()))
    if not WORDS.isdisjoint(words):
        return True
    if "times" in words and not COUNTS.isdisjoint(words):
        return True
    if not MODIFIERS.isdisjoint(words) and any(word.startswith(COMPARISONS) for word in words):
        return True
    return any(first in words and rest[0] in words
               for first, rests in PHRASES.items() for rest in rests)


def speed_cues(text: str) -> list[str]:
    """The words of ``text`` that speak about speed, as written, each once, in order."""
    if not may_have_cues(text):
        return []
    matches = list(_word_pattern().finditer(text))
    words = [match.group(0).lower() for match in matches]
    found: list[str] = []
    seen: set[str] = set()

    def add(first: int, last: int) -> None:
        cue = " ".join(text[matches[first].start():matches[last].end()].split())
        if cue.lower() not in seen:
            seen.add(cue.lower())
            found.append(cue)

    for index, word in enumerate(words):
        following = words[index + 1:index + 4]
        alone = word in WORDS and (index == 0 or words[index - 1] != NOT_AFTER.get(word))
        if alone or _number_with_unit(word):
            add(index, index)
        elif following and (_NUMBER.fullmatch(word) and following[0] in UNITS
                            or (_NUMBER.fullmatch(word) or word in COUNTS)
                            and following[0] == "times"):
            add(index, index + 1)
        if word in PHRASES:
            for rest in PHRASES[word]:
                if tuple(following[:len(rest)]) == rest:
                    add(index, index + len(rest))
                    break
        if word in MODIFIERS:
            for offset, later in enumerate(following):
                if later.startswith(COMPARISONS):
                    add(index, index + 1 + offset)
                    break
    return found
