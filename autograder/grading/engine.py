"""How every platform starts grading: one typed ``Options``, one ``start_grader``.

Torch-free (the runner, and torch with it, is imported only when a grader starts): a platform
can start the zygote, or ask for consent, before this process imports torch.
"""
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # annotations only: the runner (and torch) are imported when a grader starts
    from ..sandbox.zygote import Zygote
    from .runner import Grader

from .result import HINTS


@dataclass(frozen=True)
class Options:
    """How a grader runs submissions; every platform starts its graders from one of these."""
    assignment: Optional[str] = None  # every submission graded as this one (None: each its own)
    isolation: str = "full"           # "full" (the sandbox) or "off"
    timeout: float = 5.0              # seconds a probe may take
    hidden: tuple = ()                # paths a child must never see (other students', the results)
    same_uid: bool = False            # consent to grade where a child runs with the grader's uid (trusted code)
    fork: bool = False                # the zygote is forked from this process (it holds nothing secret yet)
    warm: Optional[frozenset] = None  # the zygote's warm-ups (None: the assignment's, else the whole course's)
    ahead: bool = True                # start the next submission's child as a grading ends
    jobs: int = 1                     # grading processes of a class run (each starts its own grader)
    earlier_reference: bool = False   # a missing module of an earlier assignment: the course's reference (after its deadline)
    hints: str = "change"             # how much of a verified repair the feedback shows: none, line, change, fix

    def __post_init__(self) -> None:
        # anything but "full" would silently grade with less isolation: say so here instead
        if self.isolation not in ("full", "off"):
            raise ValueError(f"isolation must be 'full' or 'off', not {self.isolation!r}")
        if self.hints not in HINTS:
            raise ValueError(f"hints must be one of {', '.join(HINTS)}, not {self.hints!r}")
        if not (isinstance(self.jobs, int) and self.jobs >= 1) or not self.timeout > 0:
            raise ValueError(f"jobs must be a whole number from 1 and timeout positive (jobs={self.jobs!r}, "
                             f"timeout={self.timeout!r})")
        object.__setattr__(self, "hidden", tuple(self.hidden))  # a list given is kept as a tuple (hashable)


def start_zygote(options) -> "Zygote":
    """The zygote ``options`` ask for, started now (before this process loads anything secret,
    say); ``start_grader`` takes it over."""
    from ..sandbox.zygote import Zygote
    from . import course
    warm = options.warm if options.warm is not None else course.warm_ups(options.assignment and [options.assignment])
    return Zygote(hidden=options.hidden, isolation=options.isolation, fork=options.fork, warm=warm)


def start_grader(options, zygote=None) -> "Grader":
    """A runner.Grader started from ``options`` (with ``zygote``, one start_zygote started earlier,
    or a new one). The one way any platform starts grading."""
    from .runner import Grader
    return Grader(options.assignment, timeout=options.timeout, ahead=options.ahead,
                  zygote=zygote or start_zygote(options), unsafe_same_uid=options.same_uid,
                  earlier_reference=options.earlier_reference, hints=options.hints)
