"""The class store's interface, tested against both back ends (process memory and a real Redis).

Every rule of issue 26 item 5 that the store enforces: the teacher key alone reveals and resets;
a class code reads counts, never answers, before the reveal; answers are validated; one answer per
browser, replaced when it changes; nothing after the reveal or into a round that was reset;
classes expire; unknown-code lookups are limited store-wide; concurrent submissions all land.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from store import open_store
from store.memory import MemoryStore
from store.model import (
    ALPHABET,
    CODE_LENGTH,
    MAX_FAILED_LOOKUPS_PER_S,
    InvalidAnswer,
    NotTeacher,
    Question,
    QuestionClosed,
    Reveal,
    TooManyLookups,
    UnknownClass,
    new_voter_id,
    normalise_code,
    show_code,
)
from store.redis_store import RedisStore
from tests.store.conftest import FakeClock

CHOICE = Question("kr_cv", choices=("rises", "falls", "undefined"))
NUMBER = Question("kr_row", lo=0, hi=99)
OPEN_NUMBER = Question("mh_sharp")


def _voters(n: int) -> list[str]:
    return [f"{i:032x}" for i in range(1, n + 1)]


# ---------------------------------------------------------------------------------------- codes


def test_codes_are_long_random_and_readable(store):
    codes = {store.create_class().code for _ in range(200)}
    assert len(codes) == 200
    for code in codes:
        assert len(code) == CODE_LENGTH == 8
        assert set(code) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    assert len(ALPHABET) == 32
    assert not set("ILOU") & set(ALPHABET)
    # 200 codes of 40 random bits: every one of the 32 letters shows up (a biased generator would not)
    assert set("".join(codes)) == set(ALPHABET)


def test_codes_as_typed_or_linked():
    assert normalise_code("abcd-efgh") == "ABCDEFGH"
    assert normalise_code(" 0123 4567 ") == "01234567"
    assert normalise_code("O1L1-I234") == "01111234"  # Crockford: O is 0, I and L are 1
    for bad in ("ABCDEFG", "ABCDEFGHJ", "ABCD-EFGU", "<script>", "", None, 12345678, "A" * 100):
        assert normalise_code(bad) is None, bad
    assert show_code("ABCDEFGH") == "ABCD-EFGH"


# ---------------------------------------------------------------------------------------- teacher key


def test_teacher_key_is_kept_as_a_digest_only(store):
    room = store.create_class()
    assert len(room.teacher_key) >= 43  # 256 bits, URL-safe base64
    assert store.is_teacher(room.code, room.teacher_key)
    assert not store.is_teacher(room.code, room.teacher_key + "x")
    assert not store.is_teacher(room.code, None)
    assert not store.is_teacher(room.code, "")
    assert not store.is_teacher("ZZZZZZZZ", room.teacher_key)
    digest = hashlib.sha256(room.teacher_key.encode()).hexdigest()
    assert store._digest(room.code) == digest
    if isinstance(store, RedisStore):
        dump = " ".join(str(store._r.hgetall(k)) for k in store._r.keys("*") if store._r.type(k) == "hash")
        assert room.code in " ".join(store._r.keys("*"))
        assert room.teacher_key not in dump


def test_only_the_teacher_key_reveals_and_resets(store):
    room = store.create_class()
    voter = new_voter_id()
    store.submit(room.code, CHOICE, voter, "rises", 0)
    for key in (None, "", "not-the-key", store.create_class().teacher_key):
        with pytest.raises(NotTeacher):
            store.reveal(room.code, CHOICE.qid, key, Reveal("rises"), 0)
        with pytest.raises(NotTeacher):
            store.reset(room.code, CHOICE.qid, key)
    assert store.question(room.code, CHOICE.qid).revealed is None
    assert store.question(room.code, CHOICE.qid, room.teacher_key).answers == {voter: "rises"}
    with pytest.raises(UnknownClass):
        store.reveal("ZZZZZZZZ", CHOICE.qid, room.teacher_key, Reveal("rises"), 0)


def test_a_class_code_reads_no_answers_before_the_reveal(store):
    room = store.create_class()
    voters = _voters(3)
    for voter, answer in zip(voters, ("rises", "rises", "falls"), strict=True):
        store.submit(room.code, CHOICE, voter, answer, 0)
    as_student = store.question(room.code, CHOICE.qid)
    assert (as_student.answered, as_student.answers, as_student.revealed) == (3, None, None)
    assert store.question(room.code, CHOICE.qid, "wrong-key").answers is None
    as_teacher = store.question(room.code, CHOICE.qid, room.teacher_key)
    assert as_teacher.answers == {voters[0]: "rises", voters[1]: "rises", voters[2]: "falls"}
    store.reveal(room.code, CHOICE.qid, room.teacher_key, Reveal("rises"), 0)
    after = store.question(room.code, CHOICE.qid)
    assert after.answers == as_teacher.answers
    assert after.revealed == Reveal("rises", 0.0, False)


# ---------------------------------------------------------------------------------------- answers


@pytest.mark.parametrize(
    ("question", "value"),
    [
        (CHOICE, "rise"),
        (CHOICE, ""),
        (CHOICE, 1),
        (CHOICE, None),
        (NUMBER, math.nan),
        (NUMBER, math.inf),
        (NUMBER, -1),
        (NUMBER, 99.5),
        (NUMBER, "12"),
        (NUMBER, True),
        (NUMBER, None),
        (OPEN_NUMBER, 1e13),
        (OPEN_NUMBER, -math.inf),
    ],
)
def test_invalid_answers_are_refused_and_not_stored(store, question, value):
    room = store.create_class()
    with pytest.raises(InvalidAnswer):
        store.submit(room.code, question, new_voter_id(), value, 0)
    assert store.question(room.code, question.qid, room.teacher_key).answers == {}


def test_valid_answers_are_stored_canonically(store):
    room = store.create_class()
    a, b, c = _voters(3)
    assert store.submit(room.code, NUMBER, a, 0, 0) == "0.0"
    assert store.submit(room.code, NUMBER, b, 99, 0) == "99.0"
    assert store.submit(room.code, NUMBER, c, 12.5, 0) == "12.5"
    assert store.submit(room.code, OPEN_NUMBER, a, -3e11, 0) == "-300000000000.0"
    answers = store.question(room.code, NUMBER.qid, room.teacher_key).answers
    assert answers == {a: "0.0", b: "99.0", c: "12.5"}


def test_a_browser_has_one_answer_it_can_change_until_the_reveal(store):
    room = store.create_class()
    first, other = _voters(2)
    store.submit(room.code, CHOICE, first, "falls", 0)
    store.submit(room.code, CHOICE, other, "falls", 0)
    store.submit(room.code, CHOICE, first, "rises", 0)  # changed their mind: replaces
    view = store.question(room.code, CHOICE.qid, room.teacher_key)
    assert view.answered == 2
    assert view.answers == {first: "rises", other: "falls"}
    store.reveal(room.code, CHOICE.qid, room.teacher_key, Reveal("rises"), 0)
    with pytest.raises(QuestionClosed):
        store.submit(room.code, CHOICE, other, "rises", 0)
    with pytest.raises(QuestionClosed):
        store.submit(room.code, CHOICE, new_voter_id(), "rises", 0)
    assert store.question(room.code, CHOICE.qid).answers == {first: "rises", other: "falls"}


def test_reset_clears_the_question_and_starts_a_new_round(store):
    room = store.create_class()
    a, b = _voters(2)
    store.submit(room.code, CHOICE, a, "rises", 0)
    store.submit(room.code, CHOICE, b, "falls", 0)
    store.submit(room.code, NUMBER, a, 4, 0)
    store.reveal(room.code, CHOICE.qid, room.teacher_key, Reveal("rises"), 0)
    revision = store.touch(room.code, None).revision
    assert store.reset(room.code, CHOICE.qid, room.teacher_key) == 1
    view = store.question(room.code, CHOICE.qid, room.teacher_key)
    assert (view.round, view.answered, view.answers, view.revealed) == (1, 0, {}, None)
    assert store.touch(room.code, None).revision == revision + 1
    # An answer meant for the old round (sent late) does not land in the new one ...
    with pytest.raises(QuestionClosed):
        store.submit(room.code, CHOICE, a, "rises", 0)
    # ... an answer to the new round does; the other question is untouched.
    store.submit(room.code, CHOICE, a, "falls", 1)
    assert store.question(room.code, CHOICE.qid, room.teacher_key).answers == {a: "falls"}
    assert store.question(room.code, NUMBER.qid, room.teacher_key).answers == {a: "4.0"}
    # A reveal meant for the old round is refused too.
    with pytest.raises(QuestionClosed):
        store.reveal(room.code, CHOICE.qid, room.teacher_key, Reveal("rises"), 0)


def test_unknown_class(store):
    for call in (
        lambda: store.submit("ZZZZZZZZ", CHOICE, new_voter_id(), "rises", 0),
        lambda: store.question("ZZZZZZZZ", CHOICE.qid),
        lambda: store.touch("ZZZZZZZZ", new_voter_id()),
        lambda: store.reset("ZZZZZZZZ", CHOICE.qid, "key"),
    ):
        with pytest.raises(UnknownClass):
            call()
    with pytest.raises(ValueError, match="32 hex"):
        store.submit(store.create_class().code, CHOICE, "not-an-id", "rises", 0)


# ---------------------------------------------------------------------------------------- presence


def test_presence_counts_students_who_checked_in_or_answered(store):
    room = store.create_class()
    a, b, c = _voters(3)
    assert store.touch(room.code, None).present == 0  # the teacher's page does not count
    store.touch(room.code, a)
    pulse = store.touch(room.code, b)
    assert pulse.present == 2
    store.submit(room.code, CHOICE, c, "rises", 0)  # answered without a check-in (yet)
    view = store.question(room.code, CHOICE.qid)
    assert (view.answered, view.present) == (1, 3)
    store.touch(room.code, a)  # checking in twice counts once
    assert store.touch(room.code, None).present == 2


def test_presence_window(monkeypatch):
    clock = FakeClock()
    store = MemoryStore(clock=clock)
    room = store.create_class()
    store.touch(room.code, new_voter_id())
    clock.advance(59)
    assert store.touch(room.code, None).present == 1
    clock.advance(2)  # more than PRESENT_WINDOW_S = 60 s since the check-in
    assert store.touch(room.code, None).present == 0


# ---------------------------------------------------------------------------------------- expiry


def test_memory_classes_expire():
    clock = FakeClock()
    store = MemoryStore(ttl_s=12 * 3600, clock=clock)
    room = store.create_class()
    store.submit(room.code, CHOICE, new_voter_id(), "rises", 0)
    clock.advance(12 * 3600 - 1)
    assert store.question(room.code, CHOICE.qid).answered == 1
    assert store.join(room.code)
    clock.advance(2)
    with pytest.raises(UnknownClass):
        store.question(room.code, CHOICE.qid)
    assert not store.join(room.code)
    assert store._classes == {}  # gone from memory, not only hidden


def test_redis_keys_expire_together(redis_server):
    store = RedisStore(redis_server.url, ttl_s=1.5)
    store._r.flushall()
    room = store.create_class()
    voter = new_voter_id()
    store.touch(room.code, voter)
    store.submit(room.code, CHOICE, voter, "rises", 0)
    store.reveal(room.code, CHOICE.qid, room.teacher_key, Reveal("rises"), 0)
    keys = [k for k in store._r.keys("*") if room.code in k]
    assert len(keys) == 4  # meta, seen, question, answers
    deadlines = {store._r.pexpiretime(k) for k in keys}
    assert len(deadlines) == 1  # one expiry time for everything of the class
    (deadline,) = deadlines
    assert 0 < deadline - time.time() * 1000 <= 1500
    end = time.monotonic() + 10
    while store._r.keys(f"*{room.code}*") and time.monotonic() < end:
        time.sleep(0.1)
    assert store._r.keys(f"*{room.code}*") == []
    with pytest.raises(UnknownClass):
        store.question(room.code, CHOICE.qid)


def test_default_lifetime_is_twelve_hours(store):
    assert store.ttl_s == 12 * 3600
    room = store.create_class()
    if isinstance(store, RedisStore):
        left_ms = store._r.pttl(f"attn:class:{{{room.code}}}")
        assert 12 * 3600 * 1000 - 5000 < left_ms <= 12 * 3600 * 1000


# ---------------------------------------------------------------------------------------- guessing


def test_unknown_codes_are_limited_store_wide(store):
    room = store.create_class()
    assert store.join(room.code)
    refused_after = None
    for attempt in range(1, 2 * MAX_FAILED_LOOKUPS_PER_S + 2):
        try:
            assert not store.join(f"{attempt:08d}")
        except TooManyLookups:
            refused_after = attempt
            break
    # The count restarts each second: within two seconds' worth of tries the limit is hit.
    assert refused_after is not None
    assert refused_after > MAX_FAILED_LOOKUPS_PER_S // 2
    with pytest.raises(TooManyLookups):
        store.join(room.code)  # for the rest of this second, for everybody


def test_unknown_code_limit_resets_each_second():
    clock = FakeClock(start=500.0)
    store = MemoryStore(clock=clock)
    room = store.create_class()
    for i in range(MAX_FAILED_LOOKUPS_PER_S):
        assert not store.join(f"{i:08d}")
    with pytest.raises(TooManyLookups):
        store.join(room.code)
    clock.advance(1.0)
    assert store.join(room.code)


# ---------------------------------------------------------------------------------------- concurrency


def test_concurrent_submissions_all_land(store):
    room = store.create_class()
    voters = _voters(60)
    answers = {v: ("rises", "falls", "undefined")[i % 3] for i, v in enumerate(voters)}

    def student(voter: str) -> None:
        # Each changes their mind twice, racing the others: the last answer must win.
        for answer in ("undefined", "falls", answers[voter]):
            store.submit(room.code, CHOICE, voter, answer, 0)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(student, voters))
    assert store.question(room.code, CHOICE.qid, room.teacher_key).answers == answers


def test_no_answer_lands_after_the_reveal(store):
    room = store.create_class()
    voters = _voters(40)
    accepted: dict[str, str] = {}
    lock = threading.Lock()
    go = threading.Event()

    def student(voter: str) -> None:
        go.wait()
        try:
            stored = store.submit(room.code, CHOICE, voter, "rises", 0)
        except QuestionClosed:
            return
        with lock:
            accepted[voter] = stored

    threads = [threading.Thread(target=student, args=(v,)) for v in voters]
    for t in threads:
        t.start()
    go.set()
    store.reveal(room.code, CHOICE.qid, room.teacher_key, Reveal("rises"), 0)
    for t in threads:
        t.join()
    # Every submission told "ok" is counted, and none told "closed" is.
    assert store.question(room.code, CHOICE.qid).answers == accepted


# ---------------------------------------------------------------------------------------- recovery


def test_restore_class_after_the_store_lost_it(redis_store):
    room = redis_store.create_class()
    before = redis_store.touch(room.code, None).generation
    redis_store._r.flushall()  # Redis restarted without persistence
    with pytest.raises(UnknownClass):
        redis_store.touch(room.code, None)
    assert redis_store.restore_class(room.code, room.teacher_key)
    assert redis_store.is_teacher(room.code, room.teacher_key)
    assert redis_store.touch(room.code, None).generation != before  # pages learn they must resend
    assert redis_store.restore_class(room.code, room.teacher_key)  # already there: still True
    assert not redis_store.restore_class(room.code, "someone-else")


def test_redis_down_is_unavailable_and_recovers(redis_server):
    from store.model import StoreUnavailable

    store = RedisStore(redis_server.url)
    if not redis_server.running:
        redis_server.start()
    room = store.create_class()
    voter = new_voter_id()
    store.submit(room.code, CHOICE, voter, "rises", 0)
    redis_server.stop()
    for call in (
        lambda: store.submit(room.code, CHOICE, voter, "falls", 0),
        lambda: store.question(room.code, CHOICE.qid),
        lambda: store.touch(room.code, voter),
        lambda: store.create_class(),
        lambda: store.join(room.code),
    ):
        started = time.monotonic()
        with pytest.raises(StoreUnavailable):
            call()
        assert time.monotonic() - started < 3.0  # a dead store never hangs a page
    redis_server.start()  # same port, empty (no persistence)
    with pytest.raises(UnknownClass):
        store.question(room.code, CHOICE.qid)  # the same store object reconnects by itself
    assert store.restore_class(room.code, room.teacher_key)
    store.submit(room.code, CHOICE, voter, "falls", 0)
    assert store.question(room.code, CHOICE.qid, room.teacher_key).answers == {voter: "falls"}


# ---------------------------------------------------------------------------------------- configuration


def test_open_store_is_chosen_by_redis_url(redis_server):
    if not redis_server.running:
        redis_server.start()
    assert isinstance(open_store({}), MemoryStore)
    assert isinstance(open_store({"REDIS_URL": "  "}), MemoryStore)
    assert open_store({}) is open_store({})  # one per process: every session shares the memory
    shared = open_store({"REDIS_URL": redis_server.url})
    assert isinstance(shared, RedisStore)
    assert shared is open_store({"REDIS_URL": redis_server.url})
    assert shared.ping()
