"""Assignments 07 and 08: short generated stories with questions, in the spirit of bAbI's tasks, for training
and checking a span-extraction model before it meets real paragraphs.

    python -m course_lib.qa.stories --count 2000 --seed 0 --out stories_train.json

A story is 4 to 12 short sentences about a small cast: who went where, who picked up, dropped or gave what,
on which day or at what time someone went somewhere, what colour a thing is, how many of something someone
bought. Every question's answer is a span of the story, located where the story says it (for "Where is
Amara?" the place in the sentence that moved her last, not the first time the place is named). Each event
has several wordings, so that a model learns to read rather than to match one template. A question that the
story leaves ambiguous (Kenji holds two things: "What is Kenji carrying?") is not asked.

The same seed gives the same stories (each story has its own random.Random, seeded from the seed and its
number, so the first stories do not depend on `count`). The course trains on seed 0 and evaluates on seed 1.
"""

from __future__ import annotations

import random
import string
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from course_lib.qa.squad import Answer, QAExample, write_squad

NAMES = ("Amara", "Kenji", "Lucia", "Olu", "Priya", "Mateo", "Aiyana", "Sven", "Leila", "Tomasz", "Mei", "Kwame",
         "Ingrid", "Rafael", "Yusuf", "Nadia", "Sione", "Ana", "Dmitri", "Zanele", "Ravi", "Hana", "Tariq", "Elif",
         "Keoni", "Freya", "Chidi", "Sofia", "Arjun", "Marisol", "Bongani", "Saoirse", "Farid", "Yuki", "Ewa",
         "Kofi", "Lin", "Aroha", "Omar", "Greta")
PLACES = ("the kitchen", "the garden", "the library", "the hallway", "the bathroom", "the office", "the bedroom",
          "the market", "the park", "the station", "the bakery", "the school", "the cinema", "the museum",
          "the harbour", "the post office", "the attic", "the cellar", "the playground", "the beach")
OBJECTS = ("the lamp", "the key", "the book", "the umbrella", "the football", "the kite", "the cup", "the map",
           "the letter", "the basket", "the guitar", "the scarf", "the camera", "the torch", "the hat",
           "the bicycle", "the notebook", "the violin", "the kettle", "the parcel")
COLOURS = ("red", "blue", "green", "yellow", "orange", "purple", "black", "white", "grey", "brown", "pink",
           "silver")
GOODS = ("apples", "pears", "oranges", "eggs", "lemons", "tomatoes", "candles", "stamps", "pencils", "plums",
         "mangoes", "onions", "bread rolls", "postcards", "bananas", "carrots")
NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
# Two clocks for "when": days of one week, or hours of one day. Times in a story only go forward.
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
HOURS = ("seven o'clock", "eight o'clock", "nine o'clock", "ten o'clock", "eleven o'clock", "noon",
         "one o'clock", "two o'clock", "three o'clock", "four o'clock", "five o'clock", "six o'clock")

# Wordings of each event. Slots: {p} person, {q} a second person, {place}, {o} object, {c} colour, {n} number,
# {g} goods, {t} time. "back" wordings are only used for a place the person has been to before.
MOVE = ("{p} walked to {place}.", "{p} went to {place}.", "{p} moved to {place}.", "{p} travelled to {place}.",
        "{p} ran to {place}.", "{p} headed to {place}.", "Then {p} went to {place}.",
        "After that, {p} hurried to {place}.", "{p} made the trip to {place}.", "Later, {p} arrived at {place}.",
        "{p} strolled over to {place}.")
MOVE_BACK = ("{p} went back to {place}.", "{p} returned to {place}.", "{p} walked back to {place}.")
MOVE_ON_DAY = ("On {t} {p} visited {place}.", "On {t}, {p} went to {place}.", "{p} visited {place} on {t}.",
               "{p} went to {place} on {t}.", "On {t} {p} walked over to {place}.")
MOVE_AT_HOUR = ("At {t} {p} visited {place}.", "At {t}, {p} went to {place}.", "{p} visited {place} at {t}.",
                "{p} went to {place} at {t}.", "At {t} {p} hurried over to {place}.")
PICK_UP = ("{p} picked up {o}.", "{p} took {o}.", "{p} grabbed {o}.", "{p} got {o}.", "{p} picked {o} up.",
           "{p} collected {o}.")
DROP = ("{p} dropped {o}.", "{p} put down {o}.", "{p} set {o} down.", "{p} left {o} behind.",
        "{p} discarded {o}.", "{p} put {o} away.")
GIVE = ("{p} gave {o} to {q}.", "{p} handed {o} to {q}.", "{p} passed {o} to {q}.", "{q} received {o} from {p}.",
        "{p} handed {q} {o}.", "{q} took {o} from {p}.")
COLOUR = ("{O} is {c}.", "{O} was {c}.", "{p} noticed that {o} was {c}.", "{O} is painted {c}.",
          "Everyone agreed that {o} was {c}.", "{O} has always been {c}.")
# No place in these: "At the shop, Lucia bought ..." would make "Where is Lucia?" ambiguous.
BUY = ("{p} bought {n} {g}.", "{p} bought {n} {g} for the weekend.", "For the party, {p} bought {n} {g}.",
       "{p} paid for {n} {g}.", "{p} ordered {n} {g}.", "{p} picked out {n} {g} and paid for them.")

WHERE = ("Where is {p}?", "Where is {p} now?", "Where did {p} go last?", "Where is {p} at the end?")
WHERE_BEFORE = ("Where was {p} before {place}?", "Where was {p} before going to {place}?",
                "Where had {p} been before {place}?")
WHO_HAS = ("Who has {o}?", "Who is holding {o}?", "Who is carrying {o}?", "Who has got {o} now?")
CARRYING = ("What is {p} carrying?", "What does {p} have?", "What is {p} holding?")
WHEN = ("When did {p} visit {place}?", "When did {p} go to {place}?")
WHEN_DAY = ("On which day did {p} go to {place}?", "Which day did {p} visit {place}?")
WHEN_HOUR = ("At what time did {p} go to {place}?",)
WHAT_COLOUR = ("What colour is {o}?", "What colour was {o}?", "Which colour is {o}?")
HOW_MANY = ("How many {g} did {p} buy?", "How many {g} did {p} get?")

MAX_QUESTIONS = 5  # per story: enough variety, without one story weighing much more than another


def _fill(template: str, values: dict[str, str]) -> tuple[str, dict[str, tuple[int, int]]]:
    """The sentence and, for each slot, the (start, end) of its value in it. {O} is {o} with a capital."""
    text, spans = [], {}
    length = 0
    for literal, slot, _, _ in string.Formatter().parse(template):
        text.append(literal)
        length += len(literal)
        if slot is None:
            continue
        value = values[slot.lower()]
        if slot == "O":
            value = value[0].upper() + value[1:]
        spans[slot.lower()] = (length, length + len(value))
        text.append(value)
        length += len(value)
    return "".join(text), spans


@dataclass
class _Story:
    """A story being told: its sentences so far and, for each fact, where the story states it."""

    rng: random.Random
    cast: list[str]
    places: list[str]
    objects: list[str]
    clock: Sequence[str]
    sentences: list[str] = field(default_factory=list)
    length: int = 0  # characters so far, with the spaces between sentences
    moves: dict[str, list[tuple[str, tuple[int, int], str | None, tuple[int, int] | None]]] = field(
        default_factory=dict)  # person -> [(place, span of the place, time or None, span of the time)]
    holder: dict[str, tuple[str, tuple[int, int], tuple[int, int]]] = field(
        default_factory=dict)  # object -> (person, span of the person, span of the object) where they got it
    colours: dict[str, tuple[str, tuple[int, int]]] = field(default_factory=dict)
    bought: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    times_used: int = -1  # index in the clock of the last time told

    def say(self, templates: Sequence[str], **values: str) -> dict[str, tuple[int, int]]:
        """Add one sentence in one of the wordings; return the slots' spans in the whole story."""
        sentence, spans = _fill(self.rng.choice(templates), values)
        offset = self.length + (1 if self.sentences else 0)
        self.sentences.append(sentence)
        self.length = offset + len(sentence)
        return {slot: (offset + start, offset + end) for slot, (start, end) in spans.items()}

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def carried_by(self, person: str) -> list[str]:
        return [o for o, (who, _, _) in self.holder.items() if who == person]

    # Events. Each returns False when it cannot happen in the story's present state.

    def move(self) -> bool:
        person = self.rng.choice(self.cast)
        history = [place for place, _, _, _ in self.moves.get(person, [])]
        here = history[-1] if history else None
        place = self.rng.choice([p for p in self.places if p != here])
        timed = self.times_used < len(self.clock) - 1 and self.rng.random() < 0.3
        if timed:
            # Jump forward by one or two steps, so times stay in order and the clock does not run out at once.
            self.times_used = min(len(self.clock) - 1, self.times_used + self.rng.choice((1, 1, 2)))
            time = self.clock[self.times_used]
            spans = self.say(MOVE_ON_DAY if self.clock is DAYS else MOVE_AT_HOUR, p=person, place=place, t=time)
            self.moves.setdefault(person, []).append((place, spans["place"], time, spans["t"]))
            return True
        templates = MOVE_BACK if place in history and self.rng.random() < 0.5 else MOVE
        if not self.sentences:  # "Then ..." cannot open a story
            templates = [t for t in templates if t.startswith("{")]
        spans = self.say(templates, p=person, place=place)
        self.moves.setdefault(person, []).append((place, spans["place"], None, None))
        return True

    def pick_up(self) -> bool:
        free = [o for o in self.objects if o not in self.holder]
        if not free:
            return False
        person, thing = self.rng.choice(self.cast), self.rng.choice(free)
        spans = self.say(PICK_UP, p=person, o=thing)
        self.holder[thing] = (person, spans["p"], spans["o"])
        return True

    def drop(self) -> bool:
        if not self.holder:
            return False
        thing = self.rng.choice(sorted(self.holder))
        self.say(DROP, p=self.holder.pop(thing)[0], o=thing)
        return True

    def give(self) -> bool:
        if not self.holder or len(self.cast) < 2:
            return False
        thing = self.rng.choice(sorted(self.holder))
        giver = self.holder[thing][0]
        receiver = self.rng.choice([p for p in self.cast if p != giver])
        spans = self.say(GIVE, p=giver, q=receiver, o=thing)
        self.holder[thing] = (receiver, spans["q"], spans["o"])
        return True

    def colour(self) -> bool:
        plain = [o for o in self.objects if o not in self.colours]
        if not plain:
            return False
        thing, colour = self.rng.choice(plain), self.rng.choice(COLOURS)
        spans = self.say(COLOUR, o=thing, c=colour, p=self.rng.choice(self.cast))
        self.colours[thing] = (colour, spans["c"])
        return True

    def buy(self) -> bool:
        person, goods = self.rng.choice(self.cast), self.rng.choice(GOODS)
        if (person, goods) in self.bought:
            return False
        spans = self.say(BUY, p=person, n=self.rng.choice(NUMBERS), g=goods)
        self.bought[(person, goods)] = spans["n"]
        return True


def _questions(story: _Story) -> list[tuple[str, tuple[int, int]]]:
    """Every unambiguous question the story answers, with the span of its answer."""
    rng, found = story.rng, []
    for person, moves in story.moves.items():
        found.append((rng.choice(WHERE).format(p=person), moves[-1][1]))
        visits = {}
        for place, _, _, _ in moves:
            visits[place] = visits.get(place, 0) + 1
        for i, (place, _, time, time_span) in enumerate(moves):
            if visits[place] != 1:  # went there twice: "when" and "before" have two answers
                continue
            if i > 0:
                found.append((rng.choice(WHERE_BEFORE).format(p=person, place=place), moves[i - 1][1]))
            if time is not None:
                own = WHEN_DAY if story.clock is DAYS else WHEN_HOUR
                found.append((rng.choice(WHEN + own).format(p=person, place=place), time_span))
    for thing, (person, person_span, thing_span) in story.holder.items():
        found.append((rng.choice(WHO_HAS).format(o=thing), person_span))
        # Only for someone holding exactly this one thing and who bought nothing ("What does Lucia have?"
        # would also be answered by her apples).
        if story.carried_by(person) == [thing] and not any(buyer == person for buyer, _ in story.bought):
            found.append((rng.choice(CARRYING).format(p=person), thing_span))
    for thing, (_, span) in story.colours.items():
        found.append((rng.choice(WHAT_COLOUR).format(o=thing), span))
    for (person, goods), span in story.bought.items():
        found.append((rng.choice(HOW_MANY).format(p=person, g=goods), span))
    return found


def _story(rng: random.Random) -> _Story:
    story = _Story(rng, rng.sample(NAMES, rng.randint(2, 4)), rng.sample(PLACES, rng.randint(3, 5)),
                   rng.sample(OBJECTS, rng.randint(2, 4)), rng.choice((DAYS, HOURS)))
    events = (story.move, story.pick_up, story.drop, story.give, story.colour, story.buy)
    weights = (5, 3, 1, 2, 1.5, 1.5)
    length = rng.randint(4, 12)
    story.move()  # someone always moves, so "Where is ...?" can always be asked
    while len(story.sentences) < length:
        rng.choices(events, weights)[0]()
    return story


def generate_stories(count: int, *, seed: int) -> list[QAExample]:
    """`count` stories, each with one to MAX_QUESTIONS questions, as QAExamples with ids `story-<seed>-<n>-<k>`
    (n the story, k the question, from 0) and title `story-<seed>-<n>`. The same seed gives the same stories."""
    if count < 0:
        raise ValueError(f"count must be 0 or more, not {count}")
    examples = []
    for n in range(count):
        rng = random.Random(f"course_lib.qa.stories:{seed}:{n}")  # a string seed is hashed stably (SHA-512)
        story = _story(rng)
        context, questions = story.text, _questions(story)
        rng.shuffle(questions)
        for k, (question, (start, end)) in enumerate(questions[:MAX_QUESTIONS]):
            examples.append(QAExample(f"story-{seed}-{n}-{k}", f"story-{seed}-{n}", context, question,
                                      (Answer(context[start:end], start),)))
    return examples


def _main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m course_lib.qa.stories", description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, required=True, help="how many stories")
    parser.add_argument("--seed", type=int, required=True, help="0 for training, 1 for held-out evaluation")
    parser.add_argument("--out", type=Path, required=True, help="the SQuAD v1.1 JSON file to write")
    args = parser.parse_args(argv)
    examples = generate_stories(args.count, seed=args.seed)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_squad(examples, args.out)
    print(f"wrote {args.count:,} stories, {len(examples):,} questions to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
