"""Deadlines that hold: when a submission was handed in, which one counts, and the late policy.

A submission's time is evidence the student cannot forge: the time GitHub recorded a push that
brought its commit (the repository's activity list), never the commit's own dates, which the
student sets; in a plain class folder, the time the instructor gives in a file (``--times``).
The due date is ``--due``, moved for some students by an extensions file. The course's policy
for a late submission is one of

    none          graded as it is; the result says it was late
    penalty:P     P percent of the maximum score off per day late (a started day counts whole)
    refuse        scored 0; the result says why (its checks stay, for the instructor)

``adjust`` applies it to a graded ``SubmissionResult``: the score changes, the checks and part
points never do (they say what the code earned); ``extra_data.late`` and a note in the output
say what was done. Adjusting again (a resumed run, a new due date) starts from the earned score.
"""
import csv
import json
import math
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

DAY = 86400


class DeadlineError(ValueError):
    """Bad input: a time without its zone, an unknown policy, a file that cannot be read."""


def parse_time(text, where="time"):
    """An ISO 8601 time with its zone ('2026-11-25T18:00:00Z', '...+01:00') as an aware datetime."""
    try:
        moment = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise DeadlineError(f"{where}: {text!r} is not an ISO 8601 time (say 2026-11-25T18:00:00Z)") from None
    if moment.tzinfo is None:
        raise DeadlineError(f"{where}: {text!r} has no time zone (add Z for UTC, or +01:00)")
    return moment


def iso(moment):
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Policy:
    kind: str               # "none", "penalty" or "refuse"
    percent_per_day: float = 0

    @classmethod
    def parse(cls, text):
        kind, _, amount = str(text).strip().partition(":")
        if kind in ("none", "refuse") and not amount:
            return cls(kind)
        if kind == "penalty":
            try:
                percent = float(amount)
            except ValueError:
                percent = -1
            if 0 < percent <= 100:
                return cls(kind, percent)
        raise DeadlineError(f"late policy {text!r}: say none, refuse, or penalty:P (P percent off per day late)")

    def __str__(self):
        return f"penalty:{self.percent_per_day:g}" if self.kind == "penalty" else self.kind

    def describe(self):
        return {"none": "late work is graded as it is", "refuse": "late work scores 0",
                "penalty": f"{self.percent_per_day:g}% of the points off per day late"}[self.kind]


@dataclass(frozen=True)
class Deadlines:
    due: datetime
    policy: Policy
    extensions: dict        # {student: their own due date}

    def due_for(self, student):
        return self.extensions.get(student, self.due)

    def choose(self, student, handed):
        """The submission that counts among ``handed`` [(time, what)]: the latest on time, or,
        where the policy takes late work (none, penalty) or nothing came on time, the latest."""
        if not handed:
            return None
        handed = sorted(handed, key=lambda item: item[0])
        on_time = [item for item in handed if item[0] <= self.due_for(student)]
        if self.policy.kind == "refuse" and on_time:
            return on_time[-1]
        return handed[-1]

    def adjust(self, result, student, handed_in):
        """``result`` with the policy applied for a submission handed in at ``handed_in``."""
        earlier = dict(result.more).get("late", {})
        earned = earlier.get("earned", result.score)
        more = tuple((k, v) for k, v in result.more if k != "late")
        notes = [line for line in result.output.splitlines() if line != earlier.get("note")]
        due = self.due_for(student)
        seconds = (handed_in - due).total_seconds()
        days = math.ceil(seconds / DAY) if seconds > 0 else 0
        late = {"handed_in": iso(handed_in), "due": iso(due), "days_late": days, "policy": str(self.policy),
                "earned": earned}
        score = earned
        if days and self.policy.kind == "refuse":
            score = 0
        elif days and self.policy.kind == "penalty":
            penalty = round(result.max_score * min(1, days * self.policy.percent_per_day / 100), 2)
            score = max(0, earned - (int(penalty) if penalty == int(penalty) else penalty))  # 90, not 90.0
        late["penalty"] = earned - score
        if days:
            late["note"] = (f"Late: handed in {iso(handed_in)}, {days} day{'s' * (days != 1)} after the due date "
                            f"{iso(due)}; the course's policy: {self.policy.describe()}, so the score is {score:g} "
                            f"of the {earned:g} points the code earned.")
            notes.insert(0, late["note"])
        return replace(result, score=score, output="\n".join(notes), more=more + (("late", late),))


def load(due, policy="none", extensions=None):
    """Deadlines from the command line's --due, --late and --extensions (a CSV or JSON file of
    student -> their due date); None where no --due was given."""
    if due is None:
        if extensions or Policy.parse(policy).kind != "none":
            raise DeadlineError(f"{'--extensions' if extensions else '--late ' + policy} needs --due")
        return None
    return Deadlines(parse_time(due, "--due"), Policy.parse(policy),
                     read_times(extensions, "--extensions") if extensions else {})


def for_class(args) -> tuple:
    """(Deadlines or None, {folder: time handed in}) from a class run's --due, --late,
    --extensions and --times; raises DeadlineError on bad input."""
    found = load(args.due, args.late, args.extensions)
    if found is None:
        if args.times:
            raise DeadlineError("--times needs --due")
        return None, {}
    if not args.times:
        raise DeadlineError("--due needs --times: a CSV or JSON file of each submission folder's hand-in time")
    return found, read_times(args.times)


def apply(found, times, student, outcome):
    """A class run's outcome (result or None, status, grader failed) with the policy applied."""
    result, status, failed = outcome
    if found is None or result is None:
        return outcome
    if student not in times:
        return None, "not graded: --times gives no hand-in time for this folder", False
    return found.adjust(result, student, times[student]), status, failed


def read_times(path, what="--times"):
    """{student folder: time} from a JSON object or a CSV of two columns (folder, time; a header
    line is allowed). Every time must carry its zone; a folder named twice is an error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeadlineError(f"{what} {path}: cannot be read: {exc}") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise DeadlineError(f"{what} {path}: not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise DeadlineError(f"{what} {path}: must be an object of folder name -> time")
        pairs = list(data.items())
    else:
        pairs = [tuple(cell.strip() for cell in row) for row in csv.reader(text.splitlines()) if any(row)]
        if pairs and len(pairs[0]) == 2 and pairs[0][1].lower() in ("time", "due", "submitted", "handed_in"):
            pairs = pairs[1:]
        bad = [row for row in pairs if len(row) != 2]
        if bad:
            raise DeadlineError(f"{what} {path}: every line must be folder,time (not {','.join(bad[0])!r})")
    times = {}
    for name, moment in pairs:
        if name in times:
            raise DeadlineError(f"{what} {path}: {name!r} is named twice")
        times[name] = parse_time(moment, f"{what} {path}, {name}")
    return times
