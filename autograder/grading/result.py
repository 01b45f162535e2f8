"""The one result of grading: checks, parts, a submission, a class.

Built once, in the trusted process, by the runner (``SubmissionResult.build``): the part totals,
the score and the max score are added up there and nowhere else. Every platform renders this
object (the terminal table, Markdown, JUnit, grades.csv, Gradescope's results.json, nbgrader's
grade cells, the class report) and none adds points again. ``to_json`` writes the result file
(Gradescope's results.json shape, byte for byte what the engine has always written);
``from_json`` reads one back (a class run resumed, shards merged). Torch-free: the CLI's main
process reads results without importing torch.
"""
from dataclasses import dataclass, replace
from typing import Optional

REDUCED_WARNING = ("WARNING: the submission ran WITHOUT full isolation ({why}); depending on what is missing it "
                   "could read files, reach the network or signal your processes. Grade untrusted code where "
                   "user namespaces are allowed (see the README).")

HINTS = ("none", "line", "change", "fix")  # how much of a verified repair a failed check's text shows

# The sentence that names a recognised mistake at the end of a check's feedback: written here only.
NAMES_MISTAKE = " This is exactly what you get with: {}."


class KnownMistake(AssertionError):
    """A check's failure that recognised a known mistake: the feedback (which ends naming it, for
    the student) and the mistake's name as data (``Check.mistake``). Only a check in the trusted
    process raises it; an error the child reported never becomes one, whatever its text says."""

    def __init__(self, feedback, mistake) -> None:
        super().__init__(feedback + NAMES_MISTAKE.format(mistake))
        self.mistake = mistake


def failure(feedback, mistake=None) -> KnownMistake | AssertionError:
    """The exception a failed check raises: a KnownMistake when ``mistake`` (its name) fits, else
    an AssertionError with ``feedback`` alone."""
    return KnownMistake(feedback, mistake) if mistake else AssertionError(feedback)


@dataclass(frozen=True)
class Check:
    """One hidden check: its points (all or nothing), the feedback it gave, the mistake it recognised
    and, where it drew one, a picture of the answer beside the expected one."""
    name: str           # "<part>: <first line of the check's docstring>"
    part: str
    score: float
    max_score: float
    status: str         # "passed" or "failed"
    output: str         # the feedback ("" for a plain pass)
    visibility: str = "visible"
    mistake: Optional[str] = None  # the known mistake the check recognised (its name), if any
    picture: Optional[dict] = None  # attention weights, yours beside the expected (diagnose.picture)
    answer_digest: Optional[str] = None  # a failed comparison's: its wrong answer's (compare.answer_digest)
    # a verified one-edit repair (grading.repair): {"file", "line", "was", "now", "kind", "fix", "last"}; feedback only
    repair: Optional[dict] = None

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def description(self) -> str:
        """The name without its part."""
        return self.name.removeprefix(f"{self.part}: ")

    def to_json(self) -> dict:
        """A test of Gradescope's results.json; a recognised mistake, a picture, the digest of a wrong
        answer and a repair go in its ``extra_data``."""
        data = {"name": self.name, "part": self.part, "score": self.score, "max_score": self.max_score,
                "status": self.status, "output": self.output, "visibility": self.visibility}
        extra = {key: getattr(self, key) for key in ("mistake", "picture", "answer_digest", "repair")
                 if getattr(self, key) is not None}
        if extra:
            data["extra_data"] = extra
        return data

    @classmethod
    def from_json(cls, data) -> "Check":
        extra = data.get("extra_data", {})
        return cls(data["name"], data["part"], data["score"], data["max_score"], data["status"], data["output"],
                   data.get("visibility", "visible"), extra.get("mistake"), extra.get("picture"),
                   extra.get("answer_digest"), extra.get("repair"))


@dataclass(frozen=True)
class Part:
    """A part's points: the sum of its checks'."""
    name: str
    score: float
    max_score: float

    @property
    def full_marks(self) -> bool:
        return self.score == self.max_score


@dataclass(frozen=True)
class SubmissionResult:
    """One submission graded as one assignment."""
    score: float
    max_score: float
    execution_time: float
    output: str                 # notes about the submission's files, one a line (isolation warning first)
    checks: tuple               # Checks, in the order they ran
    parts: tuple                # Parts, in the order their first check ran
    isolation: Optional[str]
    fully_isolated: bool
    protections: Optional[dict] = None  # which protections held and which were unavailable, and why
    assignment: Optional[str] = None    # None only in results written before results named it
    suites: Optional[str] = None        # digest of the suites and reference that graded it
    fingerprint: Optional[str] = None   # digest of the submission's sources (a class run reuses a result)
    # {part: the line naming the functions its module still has as stubs}, as the grader read the
    # submission (support.public_tests.not_written: the public tests' progress table says the same)
    unwritten: Optional[dict] = None
    # what the repair search did where a check failed: checks, candidates, seconds, found, bound (None:
    # every candidate was tried; "time" or "candidates": the bound that stopped it)
    repair_search: Optional[dict] = None
    more: tuple = ()                    # (key, value) of extra_data this version does not know, kept as read

    @classmethod
    def build(cls, checks, notes, isolation, seconds, protections=None, assignment=None, suites=None) -> "SubmissionResult":
        """The result of ``checks`` (Check, in the order they ran): parts and totals added up here, once."""
        totals = {}
        for check in checks:
            got, most = totals.get(check.part, (0, 0))
            totals[check.part] = (got + check.score, most + check.max_score)
        output = list(notes)
        if isolation and not isolation.startswith("namespaces"):
            output.insert(0, REDUCED_WARNING.format(why=isolation))
        return cls(score=sum(c.score for c in checks), max_score=sum(c.max_score for c in checks),
                   execution_time=round(seconds, 3), output="\n".join(output), checks=tuple(checks),
                   parts=tuple(Part(name, got, most) for name, (got, most) in totals.items()),
                   isolation=isolation, fully_isolated=isolation == "namespaces", protections=protections,
                   assignment=assignment, suites=suites)

    def with_notes(self, notes) -> "SubmissionResult":
        """The same result with ``notes`` before its own (what was found before grading, say)."""
        return replace(self, output="\n".join(filter(None, [*notes, self.output])))

    def part(self, name):
        """The Part called ``name``, or None when no check scores it."""
        return next((p for p in self.parts if p.name == name), None)

    def checks_of(self, part) -> list:
        return [c for c in self.checks if c.part == part]

    @property
    def failed(self) -> list:
        return [c for c in self.checks if not c.passed]

    def to_json(self) -> dict[str, float | str | list | dict]:
        """The result file's dict (Gradescope's results.json shape plus our extra_data)."""
        extra = {"parts": {p.name: [p.score, p.max_score] for p in self.parts}, "isolation": self.isolation,
                 "fully_isolated": self.fully_isolated}
        for key in ("protections", "assignment", "suites", "fingerprint", "unwritten", "repair_search"):
            if getattr(self, key) is not None:
                extra[key] = getattr(self, key)
        extra.update(self.more)
        return {"score": self.score, "max_score": self.max_score, "execution_time": self.execution_time,
                "output": self.output, "tests": [c.to_json() for c in self.checks], "extra_data": extra}

    @classmethod
    def from_json(cls, data) -> "SubmissionResult":
        extra = dict(data["extra_data"])
        parts = extra.pop("parts")
        known = {key: extra.pop(key) for key in ("protections", "assignment", "suites", "fingerprint", "unwritten", "repair_search")
                 if key in extra}
        isolation, fully_isolated = extra.pop("isolation", None), extra.pop("fully_isolated", False)
        return cls(score=data["score"], max_score=data["max_score"], execution_time=data["execution_time"],
                   output=data["output"], checks=tuple(Check.from_json(t) for t in data["tests"]),
                   parts=tuple(Part(name, got, most) for name, (got, most) in parts.items()),
                   isolation=isolation, fully_isolated=fully_isolated, more=tuple(extra.items()), **known)
