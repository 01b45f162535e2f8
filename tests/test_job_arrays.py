"""A class graded by a job array, as the README prints it: `--shard slurm` and `--shard
kubernetes/N` from a plain shell with only the variables the array sets, the README's Indexed Job
command run for every index in the environment a pod gets, and the README's Slurm batch script
submitted to a real one-node Slurm cluster on localhost (munged, slurmctld and slurmd of Debian's
slurm-wlm, started here as root with a generated key and slurm.conf), the merge a job that
depends on the array. Each merge is compared with one run over the whole class.

The cluster cannot start without root and Debian's `slurm-wlm` and `munge` (`.ci/run` installs
them): the test then skips saying why, except on CI (`CI` set), where it fails unless
`$AUTOGRADER_NO_SLURM` says why they could not be installed; a cluster that does not start
(its daemons' logs in the message) fails on CI too, and skips elsewhere.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from banks import reference_sources, stub_sources

from autograder.paths import ROOT
from autograder.platforms.files import result_stem

README = (ROOT / "README.md").read_text()
CLASS = {"ada": reference_sources, "bo": reference_sources, "cy": stub_sources, "di": stub_sources}
COMPARED = ("grades.csv", "summary.json", "report.html")


def readme_block(pattern):
    """The README's code block whose text matches ``pattern`` (one only)."""
    (found,) = [b for b in re.findall(r"```(?:bash|yaml)\n(.+?)```", README, re.S) if re.search(pattern, b)]
    return found


def make_class(folder):
    for name, sources in CLASS.items():
        for file, text in sources("ch03_attention").items():
            (folder / name / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / name / file).write_text(text)
    return folder


def cli(*args, cwd=ROOT, env=None):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=600, env=env or os.environ)


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """The class (``submitted/`` in a folder of its own) and one run over all of it (``one/``)."""
    root = tmp_path_factory.mktemp("array")
    make_class(root / "submitted")
    one = cli("grade", root / "submitted", "--out", root / "one")
    assert one.returncode == 0, one.stdout + one.stderr
    return root


def same_as_one_run(merged, one):
    for name in COMPARED:
        assert (merged / name).read_bytes() == (one / name).read_bytes(), name
    results = sorted(p.name for p in one.iterdir() if p.suffix == ".json" and p.name != "summary.json")
    assert len(results) == len(CLASS)
    assert sorted(p.name for p in merged.iterdir() if p.suffix == ".json" and p.name != "summary.json") == results


def plain_shell(command, variables, tmp_path):
    """``command`` in bash with nothing but PATH and ``variables``, from the repository's folder."""
    return subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin", **variables})


SLURM_TASK = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4",
              "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_JOB_ID": "77", "SLURM_JOB_ID": "80"}


@pytest.mark.parametrize("shard, variables, expected", [
    ("slurm", SLURM_TASK, [3, 4]), ("kubernetes/4", {"JOB_COMPLETION_INDEX": "1"}, [2, 4])])
def test_a_job_arrays_index_reaches_the_grader_from_a_plain_shell(shard, variables, expected, tmp_path):
    """The grader starts itself again with an environment of its own: the index must survive that."""
    (tmp_path / "submitted").mkdir()   # a slice may be empty: its outputs still go to the merge
    done = plain_shell(f'python -m autograder grade "{tmp_path}/submitted" --shard {shard} --out "{tmp_path}/out"',
                       variables, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["shard"] == expected
    lost = plain_shell(f'python -m autograder grade "{tmp_path}/submitted" --shard {shard} --out "{tmp_path}/x"',
                       {}, tmp_path)
    assert lost.returncode == 2 and "is not set" in lost.stderr


def test_merge_names_the_slices_that_wrote_nothing(tmp_path):
    (tmp_path / "submitted").mkdir()
    assert cli("grade", tmp_path / "submitted", "--shard", "1/3", "--out", tmp_path / "graded-1").returncode == 0
    (tmp_path / "graded-2").mkdir()   # its task made the folder, then failed
    done = subprocess.run(f'"{sys.executable}" -m autograder merge graded-* graded-3 --out graded', shell=True,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert "slices that wrote no results: graded-2, graded-3 (no such folder)" in done.stderr, done.stderr
    nothing = subprocess.run(f'"{sys.executable}" -m autograder merge none-* --out graded', shell=True, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert nothing.returncode == 2 and "none-* (no folder matches)" in nothing.stderr, nothing.stderr


@pytest.mark.slow
def test_the_readmes_indexed_job_grades_the_class_as_one_run(whole):
    """Every index of the README's Indexed Job, each run with only the environment a pod gets
    (its image's PATH and JOB_COMPLETION_INDEX), then the README's merge, on a copy of the volume."""
    volume = whole / "volume"
    shutil.copytree(whole / "submitted", volume / "submitted")
    job = yaml.safe_load(readme_block(r"kind: Job"))
    (container,) = job["spec"]["template"]["spec"]["containers"]
    for index in range(job["spec"]["completions"]):
        command = [part.replace("/class", str(volume)) for part in container["command"]]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env={"PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin",
                                   "JOB_COMPLETION_INDEX": str(index)})
        assert done.returncode == 0, done.stdout + done.stderr
    (merge,) = re.findall(r"`(python -m autograder merge /class/graded-\* --out /class/graded)`", README)
    done = subprocess.run(["sh", "-c", merge.replace("/class", str(volume))], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    same_as_one_run(volume / "graded", whole / "one")


# --- a real Slurm -------------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SLURM_CONF = """\
ClusterName=autograder
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={dir}/munge.socket
SlurmctldPort={ctld}
SlurmdPort={slurmd}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
# the node as declared (the README's tasks ask 4 CPUs and 16 GB each: two run at once), whatever it has
SlurmdParameters=config_overrides
NodeName={node} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=32768 State=UNKNOWN
PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def slurm_or_skip():
    """Why a cluster cannot start here (None: it can). On CI that is a failure unless
    $AUTOGRADER_NO_SLURM says why .ci/run could not install Slurm."""
    missing = [p for p in ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo") if not shutil.which(p)]
    why = (os.environ.get("AUTOGRADER_NO_SLURM")
           or (f"{', '.join(missing)} not found: apt-get install slurm-wlm munge (.ci/run installs them)" if missing
               else None)
           or (None if os.geteuid() == 0 else "the one-node cluster's slurmd runs jobs as root: not a root shell"))
    if why and os.environ.get("CI") and not os.environ.get("AUTOGRADER_NO_SLURM"):
        pytest.fail(f"no Slurm on CI: {why}")
    if why:
        pytest.skip(why)


class Cluster:
    """munged, slurmctld and slurmd in ``folder``, on free ports of localhost, until stop()."""

    def __init__(self, folder):
        self.folder, self.processes = folder, []

    def start_all(self):
        folder = self.folder
        for name in ("state", "spool"):
            (folder / name).mkdir()
        self.env = {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}
        (folder / "slurm.conf").write_text(SLURM_CONF.format(dir=folder, ctld=free_port(), slurmd=free_port(),
                                                             node=f"grader{os.getpid()}"))
        subprocess.run(["mungekey", "--create", "--keyfile", str(folder / "munge.key")], check=True,
                       capture_output=True)
        self.start("munged", "--foreground", "--force", f"--key-file={folder}/munge.key",
                   f"--socket={folder}/munge.socket", f"--pid-file={folder}/munged.pid",
                   f"--log-file={folder}/munged.log", f"--seed-file={folder}/munged.seed")
        self.wait(lambda: (folder / "munge.socket").exists(), "munged's socket")
        self.start("slurmctld", "-D", "-i")
        self.start("slurmd", "-D", "-N", f"grader{os.getpid()}")
        self.wait(lambda: self.run("sinfo", "-h", "-o", "%T").stdout.strip() == "idle", "an idle node")

    def start(self, *command):
        log = open(self.folder / f"{command[0]}.out", "w")
        self.processes.append(subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT))
        log.close()

    def run(self, *command, cwd=None):
        return subprocess.run(command, env=self.env, cwd=cwd, capture_output=True, text=True, timeout=60)

    def logs(self):
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.folder.glob("*.out")) + sorted(self.folder.glob("*.log")))

    def wait(self, ready, what, seconds=60):
        deadline = time.monotonic() + seconds
        while not ready():
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.processes):
                raise AssertionError(f"no {what} after {seconds} s\n{self.logs()}")
            time.sleep(0.5)

    def stop(self):
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def cluster():
    slurm_or_skip()
    folder = Path(tempfile.mkdtemp(prefix="slurm-"))   # mode 700 (munged refuses a key others reach); a short
    try:                                              # path, as a socket's must be
        cluster = Cluster(folder)
        try:
            try:
                cluster.start_all()
            except AssertionError as exc:
                if os.environ.get("CI"):
                    raise
                pytest.skip(f"the one-node Slurm cluster did not start here: {str(exc).splitlines()[0]}")
            yield cluster
        finally:
            cluster.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.slow
def test_the_readmes_slurm_array_grades_the_class_as_one_run(whole, cluster, tmp_path):
    """The README's grade.sh submitted as printed (a job array: its own #SBATCH line), the README's
    merge as a job that waits for it, from a folder holding the class (the grader on PYTHONPATH)."""
    started = time.monotonic()
    work = tmp_path / "work"
    shutil.copytree(whole / "submitted", work / "submitted")
    script = readme_block(r"#SBATCH --array")
    assert script.startswith("#!/bin/bash\n")
    (work / "grade.sh").write_text(script)
    submit = readme_block(r"sbatch --parsable grade\.sh")
    cluster.env["PYTHONPATH"] = str(ROOT)
    cluster.env["PATH"] = f"{os.path.dirname(sys.executable)}:{os.environ['PATH']}"
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", submit],
                          cwd=work, env=cluster.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr + cluster.logs()
    cluster.wait(lambda: not cluster.run("squeue", "-h").stdout.strip(), "empty queue", seconds=900)
    said = "\n".join(f"--- {p.name}\n{p.read_text()}" for p in sorted(work.glob("slurm-*.out")))
    assert len(list(work.glob("slurm-*_*.out"))) == 8, said   # one log per task of --array=1-8
    assert (work / "graded" / "summary.json").is_file(), said + cluster.logs()
    same_as_one_run(work / "graded", whole / "one")
    print(f"Slurm: 8 tasks and the merge in {time.monotonic() - started:.0f} s")


def test_no_folder_takes_anothers_shortened_result_name_in_any_case():
    """A long name's results go to a shortened name; a folder named like it in other capitals must
    not land on that file where the results are kept on a file system blind to case (macOS's, a
    downloaded artifact unpacked there)."""
    stem = result_stem("x" * 130)
    for twin in (stem, stem.upper(), stem[:-16] + stem[-16:].upper()):
        assert result_stem(twin).casefold() != stem.casefold(), twin


def test_merge_refuses_slices_of_different_assignments(tmp_path):
    """The same students' folders, one class handing in chapter 3 and one chapter 4: a slice of each
    is not one class, whatever --assignment said (the identity records the assignment graded)."""
    for assignment, k in (("ch03_attention", 1), ("ch04_gpt", 2)):
        for name in ("ada", "bo"):
            for file, text in stub_sources(assignment).items():
                (tmp_path / f"class-{k}" / name / file).parent.mkdir(parents=True, exist_ok=True)
                (tmp_path / f"class-{k}" / name / file).write_text(text)
        done = cli("grade", tmp_path / f"class-{k}", "--shard", f"{k}/2", "--out", tmp_path / f"graded-{k}")
        assert done.returncode == 0, done.stdout + done.stderr
    done = cli("merge", tmp_path / "graded-1", tmp_path / "graded-2", "--out", tmp_path / "graded")
    assert done.returncode == 2 and "graded as different assignments (ch03_attention and ch04_gpt)" in done.stderr, \
        done.stderr
    assert not (tmp_path / "graded").exists()
