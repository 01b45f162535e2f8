"""The trust boundary: the only code that starts untrusted code, and all that touches it.

Owns: reading a submission from disk (``submission``: no links, every size bounded), the
warm process that forks children (``zygote``), each child's isolation (``isolate``:
namespaces, private root, seccomp, limits; ``check`` and ``refusal`` before anything runs),
what runs inside the child (``child``: one probe, the plan, whose steps carry every module,
class and attribute name as data: nothing here names a chapter), the grader's handle on one
child (``session``: every read and write with a deadline and a size bound), the wire format (``protocol``: JSON and
safetensors, never pickle), the notebook kernel's sandbox (``kernel_sandbox``) and, where
there is no private root, a Python uid nobody can reach for the zygote and the kernel
(``interpreter``).

May import: the standard library, torch, safetensors, ``autograder.paths`` and
``autograder.support``. Never ``grading``, ``platforms``, ``authoring`` or the CLI: what
decides a score or writes a report must not be reachable from a child, nor from the
zygote that forks it (the zygote imports this package before every fork).
"""
