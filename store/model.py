"""What a class's store holds and the rules it enforces, whatever keeps the data (memory or Redis).

A class (issue 26) is a random code, the digest of a secret teacher key and, per question, the
anonymous answers of its students: ``{browser id: answer}`` (one answer per browser, replaced when
it changes), the round (Reset starts a new one) and, once the teacher revealed it, the computed
answer. Nothing personal: a browser id is 128 random bits the browser made up, never an address
or a name. Everything of a class expires together, :data:`CLASS_TTL_S` after it was started.

The rules live here, once, in :class:`ClassStore`; the two back ends (``store.memory``,
``store.redis_store``) only keep the data, each with its own atomic operations:

* only the teacher key reveals or resets a question; a class code alone reads the count of
  answers, never the answers, until the reveal;
* an answer is validated against the question it answers (:func:`encode_answer`): one of its
  choice ids, or a finite number in its range; after the reveal a question takes no answer;
* codes are :data:`CODE_LENGTH` characters of a 32-letter alphabet (40 bits), and lookups of
  codes that do not exist are limited for the whole store (:data:`MAX_FAILED_LOOKUPS_PER_S`), so
  guessing one is hopeless (``README.md``, "The class answers together", says how hopeless).

Any operation may raise :class:`StoreUnavailable` (the data store cannot be reached): the app
says so and retries; nothing else about a page depends on the store.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

#: A class lives this long after it was started (a school day), then everything of it is gone.
CLASS_TTL_S = 12 * 3600.0
#: Crockford's base 32: digits and capitals without I, L, O, U (nothing to misread or misspell).
ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: 8 characters of 32: 2^40 ≈ 1.1e12 codes, shown as ABCD-EFGH.
CODE_LENGTH = 8
#: Lookups of codes that are no class, per second, for the whole store (every replica together);
#: beyond it every lookup is refused for the rest of that second (see the README for the odds).
MAX_FAILED_LOOKUPS_PER_S = 20
#: A student counts as in the class when their page checked in this recently (every ~2 s).
PRESENT_WINDOW_S = 60.0
#: Bound of a number answer when the question gives none: any real prediction fits.
MAX_ABS_NUMBER = 1e12
_QID = re.compile(r"^[a-z0-9_]{1,64}$")
_VOTER = re.compile(r"^[0-9a-f]{32}$")
_CODE = re.compile(f"^[{ALPHABET}]{{{CODE_LENGTH}}}$")


class StoreError(Exception):
    """Base of the store's errors."""


class StoreUnavailable(StoreError):
    """The data store cannot be reached now (Redis down): try again later."""


class InvalidAnswer(StoreError, ValueError):
    """An answer that is none of the question's choices, not a number, or out of range."""


class NotTeacher(StoreError, PermissionError):
    """The teacher key is wrong (or missing) for this class."""


class UnknownClass(StoreError, LookupError):
    """No class has this code (never started, expired, or the store lost it)."""


class TooManyLookups(StoreError):
    """Too many lookups of unknown codes this second: try again in a moment."""


class QuestionClosed(StoreError):
    """The question was revealed (or reset since the answer was given): no answer is taken."""


def new_code() -> str:
    """A random class code: :data:`CODE_LENGTH` characters of :data:`ALPHABET` (40 random bits)."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(raw: object) -> str | None:
    """A code as typed or linked (``abcd-efgh``, ``ABCD EFGH``, ``O`` for ``0``): canonical, or None.

    Crockford's reading: case is ignored, ``O`` is ``0``, ``I`` and ``L`` are ``1``; dashes and
    spaces are dropped. Anything else that is not a well-formed code is None (a tampered link).
    """
    if not isinstance(raw, str) or len(raw) > 4 * CODE_LENGTH:
        return None
    code = re.sub(r"[\s-]", "", raw).upper().translate(str.maketrans("OIL", "011"))
    return code if _CODE.match(code) else None


def show_code(code: str) -> str:
    """A code as people read it: ``ABCD-EFGH``."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"


def new_teacher_key() -> str:
    """A secret teacher key: 256 random bits, URL-safe text."""
    return secrets.token_urlsafe(32)


def key_digest(key: str) -> str:
    """What the store keeps of a teacher key: its SHA-256 (the key itself is never stored)."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_voter_id() -> str:
    """An anonymous browser id: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)


def valid_voter_id(raw: object) -> bool:
    """Whether ``raw`` is a browser id as :func:`new_voter_id` makes them (a cookie may be tampered)."""
    return isinstance(raw, str) and bool(_VOTER.match(raw))


@dataclass(frozen=True)
class Question:
    """What the store needs to know of a question to validate its answers.

    ``choices``: the choice ids of a multiple choice; None for a number, which must be finite and
    within ``lo``..``hi`` (open bounds: :data:`MAX_ABS_NUMBER`).
    """

    qid: str
    choices: tuple[str, ...] | None = None
    lo: float | None = None
    hi: float | None = None

    def __post_init__(self) -> None:
        if not _QID.match(self.qid):
            raise ValueError(f"question id {self.qid!r} must match {_QID.pattern}")

    @property
    def numeric(self) -> bool:
        return self.choices is None


def encode_answer(question: Question, value: Any) -> str:
    """The answer as the store keeps it: the choice id, or the number's ``repr`` (``0.25``, ``3.0``).

    Raises:
        InvalidAnswer: a choice id not among the question's, a number that is not finite or out
            of range, or a value of another type (text for a number, a bool).
    """
    if question.choices is not None:
        if not isinstance(value, str) or value not in question.choices:
            raise InvalidAnswer(f"{value!r} is not one of the choices {list(question.choices)}")
        return value
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidAnswer(f"{value!r} is not a number")
    number = float(value)
    lo = question.lo if question.lo is not None else -MAX_ABS_NUMBER
    hi = question.hi if question.hi is not None else MAX_ABS_NUMBER
    if not math.isfinite(number) or not lo <= number <= hi:
        raise InvalidAnswer(f"{number!r} is not a finite number between {lo:g} and {hi:g}")
    return repr(number)


def decode_answer(question: Question, stored: str) -> str | float:
    """The value of a stored answer: the choice id, or the number."""
    return stored if question.choices is not None else float(stored)


@dataclass(frozen=True)
class Reveal:
    """The computed answer the teacher revealed, and how close a number must be to count as right."""

    answer: str  # a choice id, or the number's repr
    tolerance: float = 0.0
    relative: bool = False

    def to_json(self) -> str:
        return json.dumps({"answer": self.answer, "tolerance": self.tolerance, "relative": self.relative})

    @classmethod
    def from_json(cls, text: str) -> Reveal:
        data = json.loads(text)
        return cls(str(data["answer"]), float(data["tolerance"]), bool(data["relative"]))


@dataclass(frozen=True)
class Classroom:
    """A class just started: its code (to share) and its teacher key (to keep secret)."""

    code: str
    teacher_key: str


@dataclass(frozen=True)
class Pulse:
    """What a student's page learns on each check-in: what changed in the class since last time.

    ``revision`` grows with every reveal and reset; ``generation`` is new when the class was
    (re)created, e.g. after the store lost its data and the teacher's page restored it.
    """

    revision: int
    generation: str
    present: int = 0  # students whose page checked in within PRESENT_WINDOW_S


@dataclass(frozen=True)
class QuestionView:
    """One question of a class as one reader may see it.

    ``answers`` ({browser id: stored answer}) is None unless the reader holds the teacher key or
    the question was revealed: a class code alone reads the count, never the answers.
    ``present`` counts students whose page checked in within :data:`PRESENT_WINDOW_S` or who
    answered this round (the "of 28" of "17 of 28 answered").
    """

    qid: str
    round: int
    answered: int
    present: int
    revealed: Reveal | None
    answers: Mapping[str, str] | None = field(default=None)
    generation: str = ""


@dataclass(frozen=True)
class RawQuestion:
    """A question's data as a back end reads it (no rule applied yet)."""

    round: int
    answers: dict[str, str]
    reveal: str | None  # Reveal.to_json()
    present: frozenset[str]
    generation: str


class ClassStore(ABC):
    """Classes, their questions and anonymous answers: the rules here, the data in a back end.

    Subclasses implement the ``_``-prefixed primitives atomically (a lock, or one Redis script
    each); every public method is safe to call from many sessions and processes at once.
    """

    ttl_s: float = CLASS_TTL_S

    # ------------------------------------------------------------------ the teacher

    def create_class(self) -> Classroom:
        """Start a class: a fresh random code and teacher key (the store keeps only the key's digest)."""
        key = new_teacher_key()
        for _ in range(20):  # 20 collisions in a row among 2^40 codes: the store is broken
            code = new_code()
            if self._create(code, key_digest(key), secrets.token_hex(8)):
                return Classroom(code, key)
        raise StoreError("no free class code found")

    def restore_class(self, code: str, teacher_key: str) -> bool:
        """Re-create a class the store lost (Redis restarted empty), from the teacher's session.

        Returns True if the class is there now under this teacher key (restored, or it was never
        lost), False if the code belongs to another teacher.
        """
        digest = key_digest(teacher_key)
        if self._create(code, digest, secrets.token_hex(8)):
            return True
        return self._is_teacher(code, digest)

    def is_teacher(self, code: str, teacher_key: str | None) -> bool:
        """Whether ``teacher_key`` is this class's teacher key (False for an unknown class)."""
        return bool(teacher_key) and self._is_teacher(code, key_digest(teacher_key))

    def _is_teacher(self, code: str, digest: str) -> bool:
        stored = self._digest(code)
        return stored is not None and hmac.compare_digest(stored, digest)

    def _require_teacher(self, code: str, teacher_key: str | None) -> None:
        stored = self._digest(code)
        if stored is None:
            raise UnknownClass(code)
        if not teacher_key or not hmac.compare_digest(stored, key_digest(teacher_key)):
            raise NotTeacher("only the class's teacher key can do this")

    def reveal(self, code: str, qid: str, teacher_key: str | None, reveal: Reveal, round_: int) -> None:
        """Reveal question ``qid`` of round ``round_``: it takes no more answers; readers see them.

        Raises:
            NotTeacher, UnknownClass, QuestionClosed (the question was reset since ``round_``).
        """
        self._require_teacher(code, teacher_key)
        if not self._reveal(code, qid, round_, reveal.to_json()):
            raise QuestionClosed(f"{qid} was reset since round {round_}")

    def reset(self, code: str, qid: str, teacher_key: str | None) -> int:
        """Clear question ``qid``: its answers and its reveal; a new round starts. Returns it."""
        self._require_teacher(code, teacher_key)
        return self._reset(code, qid)

    # ------------------------------------------------------------------ everybody

    def join(self, code: str) -> bool:
        """Whether a class has this code; lookups of unknown codes are limited store-wide.

        Raises:
            TooManyLookups: more than :data:`MAX_FAILED_LOOKUPS_PER_S` unknown codes were looked up
                this second (by anyone): try again in a moment.
        """
        if self._failed_lookups() >= MAX_FAILED_LOOKUPS_PER_S:
            raise TooManyLookups("too many unknown class codes tried: try again in a moment")
        if self._digest(code) is not None:
            return True
        self._count_failed_lookup()
        return False

    def touch(self, code: str, voter: str | None) -> Pulse:
        """A student's page checks in (``voter`` is present now); what changed in the class.

        ``voter`` None reads the pulse without checking in (the teacher's page).

        Raises:
            UnknownClass: the class is gone (expired, or the store lost it).
        """
        if voter is not None:
            _check_voter(voter)
        pulse = self._touch(code, voter)
        if pulse is None:
            raise UnknownClass(code)
        return pulse

    def submit(self, code: str, question: Question, voter: str, value: Any, round_: int) -> str:
        """Record (or replace) the answer of browser ``voter`` to ``question``, for round ``round_``.

        Returns the answer as stored.

        Raises:
            InvalidAnswer: see :func:`encode_answer`.
            QuestionClosed: revealed, or reset since ``round_``.
            UnknownClass: the class is gone.
        """
        _check_voter(voter)
        encoded = encode_answer(question, value)
        status = self._submit(code, question.qid, round_, voter, encoded)
        if status == "gone":
            raise UnknownClass(code)
        if status != "ok":
            raise QuestionClosed(f"{question.qid}: {status}")
        return encoded

    def question(self, code: str, qid: str, teacher_key: str | None = None) -> QuestionView:
        """Question ``qid`` as the reader may see it: answers only for the teacher or after the reveal.

        Raises:
            UnknownClass: the class is gone.
        """
        raw = self._read(code, qid)
        if raw is None:
            raise UnknownClass(code)
        revealed = Reveal.from_json(raw.reveal) if raw.reveal else None
        teacher = teacher_key is not None and self.is_teacher(code, teacher_key)
        return QuestionView(
            qid=qid,
            round=raw.round,
            answered=len(raw.answers),
            present=len(raw.present | raw.answers.keys()),
            revealed=revealed,
            answers=dict(raw.answers) if teacher or revealed is not None else None,
            generation=raw.generation,
        )

    # ------------------------------------------------------------------ the back end's primitives

    @abstractmethod
    def _create(self, code: str, digest: str, generation: str) -> bool:
        """Create the class if no class has this code (expiring in ``ttl_s``); whether it did."""

    @abstractmethod
    def _digest(self, code: str) -> str | None:
        """The class's teacher-key digest, None when there is no such class."""

    @abstractmethod
    def _touch(self, code: str, voter: str | None) -> Pulse | None:
        """Mark ``voter`` (if any) present now; the class's pulse, None when there is no such class."""

    @abstractmethod
    def _submit(self, code: str, qid: str, round_: int, voter: str, encoded: str) -> str:
        """Atomically: "gone" (no class), "stale" (another round), "closed" (revealed), or store
        the answer and return "ok"."""

    @abstractmethod
    def _read(self, code: str, qid: str) -> RawQuestion | None:
        """The question's data (an unasked question: round 0, nothing), None when no such class."""

    @abstractmethod
    def _reveal(self, code: str, qid: str, round_: int, reveal: str) -> bool:
        """Atomically: at ``round_``, store the reveal and bump the revision; whether it did."""

    @abstractmethod
    def _reset(self, code: str, qid: str) -> int:
        """Atomically: drop the answers and the reveal, next round, bump the revision; the new round."""

    @abstractmethod
    def _failed_lookups(self) -> int:
        """Unknown codes looked up in the current second (store-wide)."""

    @abstractmethod
    def _count_failed_lookup(self) -> None:
        """Count one lookup of an unknown code in the current second."""

    def ping(self) -> bool:
        """Whether the data store answers (always, for memory)."""
        return True


def _check_voter(voter: str) -> None:
    if not valid_voter_id(voter):
        raise ValueError("a browser id is 32 hex digits")
