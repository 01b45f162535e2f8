"""Run a command in a process tree where new user namespaces are refused, the way Docker's
default seccomp profile refuses them (Gradescope's containers, most CI runners):
``unshare`` and ``clone`` with CLONE_NEWUSER fail with EPERM, ``clone3`` with ENOSYS (so
libc falls back to ``clone``). Only this process and what it starts are affected.

With ``--all``, every new namespace is refused, as that profile does for a container's root
(which has no CAP_SYS_ADMIN): root itself needs no user namespace for the others.

    python tests/no_userns.py [--all] COMMAND [ARGS...]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from autograder import sandbox  # noqa: E402

NUMBERS = {"x86_64": {"unshare": 272, "clone": 56, "clone3": 435},
           "aarch64": {"unshare": 97, "clone": 220, "clone3": 435}}
EVERY_NAMESPACE = (sandbox.CLONE_NEWNS | sandbox.CLONE_NEWUTS | sandbox.CLONE_NEWIPC | sandbox.CLONE_NEWUSER
                   | sandbox.CLONE_NEWPID | sandbox.CLONE_NEWNET | 0x02000000)   # and CLONE_NEWCGROUP


def main(argv):
    import platform
    refused = sandbox.CLONE_NEWUSER
    if argv[0] == "--all":
        refused, argv = EVERY_NAMESPACE, argv[1:]
    nr = NUMBERS[platform.machine()]
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    program = [(ld, 0, 0, 0),
               (jeq, 0, 1, nr["clone3"]), (ret, 0, 0, enosys),
               (jeq, 1, 0, nr["unshare"]), (jeq, 0, 3, nr["clone"]),
               (ld, 0, 0, 16), (jset, 0, 1, refused), (ret, 0, 0, eperm),
               (ret, 0, 0, allow)]
    sandbox._no_new_privs()
    sandbox.install_seccomp(program)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
